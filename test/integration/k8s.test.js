// deploy/k8s validated offline (issue 12, item 4): the core kinds against Kubernetes' own schemas
// (kubernetes-validate, PyPI), the k6-operator TestRuns against the TestRun CRD's openAPIV3Schema
// (test/fixtures/k6-operator/, with its source and licence). Both checks are shown to fail on a broken manifest. The TLS
// overlay (deploy/k8s/tls) is rendered as `kubectl apply -k` would (its JSON patches applied by fast-json-patch, RFC 6902)
// and checked the same way.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync, statSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { promisify } from 'node:util';
import Ajv from 'ajv';
import jsonPatch from 'fast-json-patch';
import YAML from 'yaml';
import { compose } from '../helpers/compose.js';
import { ROOT } from '../helpers/server.js';

const run = promisify(execFile);
const K8S = path.join(ROOT, 'deploy/k8s');
const CRD = path.join(ROOT, 'test/fixtures/k6-operator/k6.io_testruns.yaml');
// kubernetes-validate's release, pinned; installed into .tools/python when python3 lacks it.
const KUBERNETES_VALIDATE = 'kubernetes-validate==1.37.0';
const PYTHONPATH = path.join(ROOT, '.tools/python');

let dir;
before(async () => { dir = await mkdtemp(path.join(os.tmpdir(), 'k8s-')); });
after(() => rm(dir, { recursive: true, force: true }));

/** Runs kubernetes-validate --strict on files; provisions it from PyPI first when it is missing. */
async function kubernetesValidate(...files) {
  const env = { ...process.env, PYTHONPATH };
  const validate = () => run('python3', ['-m', 'kubernetes_validate', '--strict', '--no-warn', ...files], { env });
  try {
    await run('python3', ['-m', 'kubernetes_validate', '--version'], { env });
  } catch {
    await run('python3', ['-m', 'pip', 'install', '--quiet', '--target', PYTHONPATH, KUBERNETES_VALIDATE], { env })
      .catch((err) => { throw new Error(`kubernetes-validate is missing and could not be installed (python3 -m pip install ${KUBERNETES_VALIDATE}): ${err.stderr}`); });
  }
  return validate().then(() => ({ ok: true, output: '' }), (err) => ({ ok: false, output: `${err.stdout}${err.stderr}` }));
}

test('the Deployment and Services pass Kubernetes\' own schemas; a broken one does not', async () => {
  const { ok, output } = await kubernetesValidate(path.join(K8S, 'server.yaml'));
  assert.ok(ok, output);
  const docs = YAML.parseAllDocuments(readFileSync(path.join(K8S, 'server.yaml'), 'utf8')).map((d) => d.toJS());
  docs[0].spec.template.spec.containers[0].ports[0].containerPort = 'three thousand';
  const broken = path.join(dir, 'broken.yaml');
  await writeFile(broken, docs.map((d) => YAML.stringify(d)).join('---\n'));
  assert.equal((await kubernetesValidate(broken)).ok, false, 'a port that is no number passed');
});

for (const mode of ['http', 'grpc']) {
  test(`the ${mode} TestRun passes the k6-operator CRD's schema; a broken one does not`, () => {
    const crd = YAML.parse(readFileSync(CRD, 'utf8'));
    const version = crd.spec.versions.find((v) => v.name === 'v1alpha1');
    // The schema is OpenAPI v3 (JSON Schema plus x-kubernetes-* keywords, which ajv leaves alone with strict off).
    const validate = new Ajv({ strict: false, allErrors: true }).compile(version.schema.openAPIV3Schema);
    const testRun = YAML.parse(readFileSync(path.join(K8S, `testrun-${mode}.yaml`), 'utf8'));
    assert.equal(`${testRun.apiVersion}/${testRun.kind}`, `${crd.spec.group}/v1alpha1/${crd.spec.names.kind}`);
    assert.ok(validate(testRun), JSON.stringify(validate.errors));
    assert.match(testRun.spec.arguments, mode === 'http' ? /-e REMOTE_HTTP_HOST=json-vs-grpc-bench:3000/ : /-e REMOTE_GRPC_HOST=json-vs-grpc-bench:4000/);
    assert.equal(validate({ ...testRun, spec: { ...testRun.spec, parallelism: 'two' } }), false, 'a parallelism that is no number passed');
  });
}

/**
 * The resources `kubectl apply -k dir` applies, for the Kustomize fields deploy/k8s uses: `resources` (files, or folders
 * with a kustomization of their own) and `patches` (RFC 6902 JSON patches, each on one resource by kind and name). A
 * kustomization with any other field fails here, so this rendering cannot quietly drift from Kustomize's.
 * @param {string} dir
 * @returns {object[]}
 */
function kustomize(dir) {
  const k = YAML.parse(readFileSync(path.join(dir, 'kustomization.yaml'), 'utf8'));
  assert.deepEqual(Object.keys(k).filter((key) => !['apiVersion', 'kind', 'resources', 'patches'].includes(key)), [], `${dir}: a field this rendering does not know`);
  assert.equal(`${k.apiVersion}/${k.kind}`, 'kustomize.config.k8s.io/v1beta1/Kustomization');
  const docs = k.resources.flatMap((r) => {
    const at = path.join(dir, r);
    return statSync(at).isDirectory() ? kustomize(at) : YAML.parseAllDocuments(readFileSync(at, 'utf8')).map((d) => d.toJS());
  });
  for (const { path: file, target } of k.patches ?? []) {
    const i = docs.findIndex((d) => d.kind === target.kind && d.metadata.name === target.name);
    assert.ok(i >= 0, `${file}: no ${target.kind} ${target.name} to patch`);
    // Validated and applied in order; a failed `test` op or a missing path throws.
    docs[i] = jsonPatch.applyPatch(structuredClone(docs[i]), YAML.parse(readFileSync(path.join(dir, file), 'utf8')), true).newDocument;
  }
  return docs;
}

test('kubectl apply -k deploy/k8s applies server.yaml as it is', () => {
  assert.deepEqual(kustomize(K8S), YAML.parseAllDocuments(readFileSync(path.join(K8S, 'server.yaml'), 'utf8')).map((d) => d.toJS()));
});

test('the TLS overlay (deploy/k8s/tls): the Secret as TLS_CERT/TLS_KEY, probes over TLS, no h2c; it passes Kubernetes\' schemas', async () => {
  const docs = kustomize(path.join(K8S, 'tls'));
  const rendered = path.join(dir, 'tls.yaml');
  await writeFile(rendered, docs.map((d) => YAML.stringify(d)).join('---\n'));
  const { ok, output } = await kubernetesValidate(rendered);
  assert.ok(ok, output);
  const deployment = docs.find((d) => d.kind === 'Deployment');
  const pod = deployment.spec.template.spec;
  const [server] = pod.containers;
  const env = Object.fromEntries(server.env.map((e) => [e.name, e.value]));
  // A Secret of type kubernetes.io/tls (kubectl create secret tls) holds tls.crt and tls.key.
  const mount = server.volumeMounts.find((m) => pod.volumes.find((v) => v.name === m.name)?.secret?.secretName === 'json-vs-grpc-bench-tls');
  assert.ok(mount?.readOnly, JSON.stringify(server.volumeMounts));
  assert.deepEqual([env.TLS_CERT, env.TLS_KEY], [`${mount.mountPath}/tls.crt`, `${mount.mountPath}/tls.key`]);
  assert.equal(server.readinessProbe.httpGet.scheme, 'HTTPS');
  // The liveness probe is the image's own health check, the command Compose and the Dockerfile run.
  assert.deepEqual(server.livenessProbe.exec.command, compose['x-server'].healthcheck.test.slice(1));
  for (const service of docs.filter((d) => d.kind === 'Service')) {
    assert.ok(service.spec.ports.every((p) => p.appProtocol !== 'kubernetes.io/h2c'), `${service.metadata.name}: still h2c`);
  }
  // Everything else as the base has it.
  const base = kustomize(K8S);
  assert.deepEqual(docs.map((d) => `${d.kind}/${d.metadata.name}`), base.map((d) => `${d.kind}/${d.metadata.name}`));
  assert.deepEqual(pod.containers[0].ports, base[0].spec.template.spec.containers[0].ports);
});
