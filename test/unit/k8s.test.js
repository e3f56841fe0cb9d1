// The Kubernetes server manifest (deploy/k8s/server.yaml) read statically: what it probes and publishes is what the
// server serves at its defaults (the schema checks: test/integration/k8s.test.js).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import YAML from 'yaml';
import { ROOT } from '../../bench/root.js';
import { LISTENERS } from '../../server/listeners.js';
import { listenersOf, readSettings } from '../../server/settings.js';

const K8S = path.join(ROOT, 'deploy/k8s');

test('the server manifest probes what the server serves, on the ports it listens on', () => {
  const [deployment, service, headless] = YAML.parseAllDocuments(readFileSync(path.join(K8S, 'server.yaml'), 'utf8')).map((d) => d.toJS());
  const [container] = deployment.spec.template.spec.containers;
  const ports = Object.fromEntries(container.ports.map((p) => [p.name, p.containerPort]));
  // The server's own defaults: MODE (its listener set) and each listener's port (server/listeners.js).
  const settings = readSettings(Object.fromEntries((container.env ?? []).map((e) => [e.name, e.value])));
  const defaults = Object.fromEntries(listenersOf(settings.MODE).map((name) => [name, LISTENERS[name].defaultPort]));
  assert.deepEqual(ports, defaults);
  assert.equal(container.readinessProbe.httpGet.path, '/health');
  assert.equal(container.livenessProbe.grpc.port, defaults.grpc);
  assert.equal(headless.spec.clusterIP, 'None');
  assert.deepEqual(service.spec.ports.map((p) => p.port), Object.values(defaults));
});

