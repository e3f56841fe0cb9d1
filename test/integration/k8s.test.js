// deploy/k8s validated offline (issue 12, item 4): the core kinds against Kubernetes' own schemas
// (kubernetes-validate, PyPI), the k6-operator TestRuns against the TestRun CRD's openAPIV3Schema
// (test/fixtures/k6-operator/, with its source and licence). Both checks are shown to fail on a broken manifest.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { promisify } from 'node:util';
import Ajv from 'ajv';
import YAML from 'yaml';
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
