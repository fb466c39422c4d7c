/**
 * Deployment files, validated offline (no Docker engine, no cluster): the Kubernetes manifests in
 * deploy/k8s (strict YAML, kinds, ports, probes, labels, security, sizing, settings known to
 * config.ts), the Dockerfile and .dockerignore, the manifests against their APIs' schemas, the
 * server process's lifecycle (the image's entry module, run by this machine's node, not in a
 * container: with the ConfigMap's settings, probed on the manifest's probe paths and by the
 * Dockerfile's own HEALTHCHECK command, stopped by SIGTERM, expected to exit 0), and the real
 * image built and run where a container engine answers (skipped, saying so, where none does).
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net, { type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Writable } from 'node:stream';
import { parseAllDocuments } from 'yaml';
import { describeConfig, jsonBodyLimit, loadConfig } from '../src/server/config.js';
import { startServer } from '../src/server/start.js';
import { createTelemetry } from '../src/server/telemetry/tracing.js';
import { startTestServer } from './server-helpers.js';
import { ENDPOINTS } from '../src/contract/endpoints.js';
import { HEALTH_PATHS, LIVENESS_PATH, READINESS_PATH } from '../src/server/routes/health.js';
import { WORKER_OLD_SPACE_MB } from '../src/server/render-pool.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const K8S = join(ROOT, 'deploy', 'k8s');
const read = (...parts: string[]) => readFileSync(join(ROOT, ...parts), 'utf8');

// ---------------------------------------------------------------------------------------------
// Manifests

type Obj = Record<string, any>;

/** Every YAML document of a file, parsed strictly (duplicate keys, bad syntax and warnings fail). */
function parseYamlFile(path: string): Obj[] {
  const docs = parseAllDocuments(readFileSync(path, 'utf8'), { strict: true, uniqueKeys: true, prettyErrors: true });
  if (!Array.isArray(docs)) throw new Error(`${path}: not a YAML stream`);
  return docs.map((doc, i) => {
    assert.deepEqual(doc.errors.map(String), [], `${path} document ${i}: errors`);
    assert.deepEqual(doc.warnings.map(String), [], `${path} document ${i}: warnings`);
    const value = doc.toJS({ maxAliasCount: 0 }) as unknown;
    assert.ok(value && typeof value === 'object' && !Array.isArray(value), `${path} document ${i} is a mapping`);
    return value as Obj;
  });
}

const EXPECTED_KINDS: Record<string, string> = {
  ConfigMap: 'v1',
  Service: 'v1',
  Deployment: 'apps/v1',
  HorizontalPodAutoscaler: 'autoscaling/v2',
  PodDisruptionBudget: 'policy/v1',
  HTTPRoute: 'gateway.networking.k8s.io/v1',
  Kustomization: 'kustomize.config.k8s.io/v1beta1',
};

const yamlFiles = readdirSync(K8S).filter((f) => /\.ya?ml$/.test(f)).sort();
const docsByFile = new Map(yamlFiles.map((f) => [f, parseYamlFile(join(K8S, f))]));
const allDocs = [...docsByFile.values()].flat();

/** Kustomize components (deploy/k8s/components/<name>/): per-implementation objects and patches. */
const COMPONENT_KINDS: Record<string, string> = {
  Component: 'kustomize.config.k8s.io/v1alpha1',
  BackendTrafficPolicy: 'gateway.envoyproxy.io/v1alpha1',
  ClientSettingsPolicy: 'gateway.nginx.org/v1alpha1',
  Middleware: 'traefik.io/v1alpha1',
  ServiceMonitor: 'monitoring.coreos.com/v1',
  NetworkPolicy: 'networking.k8s.io/v1',
};
const COMPONENTS = join(K8S, 'components');
const componentNames = readdirSync(COMPONENTS).sort();
const componentDocs = new Map(componentNames.map((c) => [c, readdirSync(join(COMPONENTS, c)).filter((f) => /\.ya?ml$/.test(f)).sort()
  .flatMap((f) => parseYamlFile(join(COMPONENTS, c, f)).map((doc) => ({ file: `components/${c}/${f}`, doc })))]));
const componentDoc = (component: string, kind: string): Obj => {
  const found = (componentDocs.get(component) ?? []).filter((d) => d.doc.kind === kind);
  assert.equal(found.length, 1, `components/${component}: one ${kind}`);
  return found[0]!.doc;
};

function one(kind: string): Obj {
  const found = allDocs.filter((d) => d.kind === kind);
  assert.equal(found.length, 1, `exactly one ${kind}`);
  return found[0]!;
}

const deployment = one('Deployment');
const service = one('Service');
const hpa = one('HorizontalPodAutoscaler');
const pdb = one('PodDisruptionBudget');
const configMap = one('ConfigMap');
const route = one('HTTPRoute');
const kustomization = one('Kustomization');
const podSpec: Obj = deployment.spec.template.spec;
const podLabels: Record<string, string> = deployment.spec.template.metadata.labels;
assert.equal(podSpec.containers.length, 1, 'one container');
const container: Obj = podSpec.containers[0];
const configData: Record<string, string> = configMap.data;

const settings = new Map(describeConfig().map((e) => [e.name, e]));
const defaultOf = (name: string) => {
  const entry = settings.get(name);
  assert.ok(entry, `${name} is a known setting`);
  return entry.default;
};
/** The value the pod gets: the ConfigMap's, else the server's default. */
const podSetting = (name: string) => configData[name] ?? defaultOf(name);

function selects(selector: Record<string, string>, labels: Record<string, string>): boolean {
  return Object.keys(selector).length > 0 && Object.entries(selector).every(([k, v]) => labels[k] === v);
}

/** A container port by number or by name, as a probe or a Service's targetPort names it. */
function resolvePort(port: number | string): number {
  if (typeof port === 'number') return port;
  const named = (container.ports as Obj[]).find((p) => p.name === port);
  assert.ok(named, `container port named ${port}`);
  return named.containerPort;
}

/** Kubernetes quantities used here: plain/milli CPUs and binary/decimal byte suffixes. */
function quantity(q: string | number): number {
  const m = /^(\d+(?:\.\d+)?)(m|Ki|Mi|Gi|Ti|k|M|G|T)?$/.exec(String(q));
  assert.ok(m, `quantity ${q}`);
  const units: Record<string, number> = { m: 1e-3, Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, k: 1e3, M: 1e6, G: 1e9, T: 1e12 };
  return Number(m[1]) * (m[2] ? units[m[2]]! : 1);
}

/** Measured with deploy/measure-memory.ts (see deploy/README.md); MiB. */
// The per-render ceiling (README, "Memory per render"): V2A_MAX_DECODED_BYTES bounds the decoder.
// workerHeap: the garbage a busy worker's heap may hold before a collection, below its initial
// old generation (WORKER_OLD_SPACE_MB).
const MEASURED_MIB = { base: 75, workerIdle: 45, workerHeap: 60, render: 380, body: 21 } as const;

describe('Kubernetes manifests', () => {
  test('every file parses strictly, every document has an expected apiVersion and kind', () => {
    assert.ok(yamlFiles.length >= 7, `manifests found: ${yamlFiles.join(', ')}`);
    for (const [file, docs] of docsByFile) {
      assert.ok(docs.length >= 1, `${file} has a document`);
      for (const doc of docs) {
        assert.ok(doc.kind in EXPECTED_KINDS, `${file}: unexpected kind ${doc.kind}`);
        assert.equal(doc.apiVersion, EXPECTED_KINDS[doc.kind], `${file}: apiVersion of ${doc.kind}`);
        if (doc.kind !== 'Kustomization') {
          assert.match(doc.metadata?.name ?? '', /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, `${file}: metadata.name`);
          assert.equal(doc.metadata.labels?.['app.kubernetes.io/name'], 'v2a', `${file}: app.kubernetes.io/name label`);
        }
      }
    }
  });

  test('the kustomization lists every manifest exactly once', () => {
    const listed = [...(kustomization.resources as string[])].sort();
    assert.deepEqual(listed, yamlFiles.filter((f) => f !== 'kustomization.yaml'));
    const images = (kustomization.images ?? []) as Obj[];
    const repo = String(container.image).replace(/:[^:/]+$/, '');
    assert.ok(images.some((i) => i.name === repo), 'kustomization images names the Deployment image');
  });

  test('kubectl kustomize renders the set (when kubectl is installed)', (t) => {
    const probe = spawnSync('kubectl', ['version', '--client'], { encoding: 'utf8', timeout: 10_000 });
    if (probe.error || probe.status !== 0) {
      t.skip('kubectl not installed');
      return;
    }
    const out = spawnSync('kubectl', ['kustomize', K8S], { encoding: 'utf8', timeout: 20_000 });
    assert.equal(out.status, 0, out.stderr);
    const rendered = parseAllDocuments(out.stdout, { strict: true, uniqueKeys: true });
    assert.ok(Array.isArray(rendered));
    const kinds = rendered.map((d) => (d.toJS() as Obj).kind).sort();
    assert.deepEqual(kinds, Object.keys(EXPECTED_KINDS).filter((k) => k !== 'Kustomization').sort());
  });

  test('labels: the Deployment, Service and PDB select the pod labels', () => {
    assert.equal(podLabels['app.kubernetes.io/name'], 'v2a');
    const matchLabels: Record<string, string> = deployment.spec.selector.matchLabels;
    assert.ok(selects(matchLabels, podLabels), 'Deployment selector matches its template');
    assert.ok(selects(service.spec.selector, podLabels), 'Service selector matches the pods');
    assert.ok(selects(pdb.spec.selector.matchLabels, podLabels), 'PDB selector matches the pods');
    for (const c of podSpec.topologySpreadConstraints ?? []) assert.ok(selects(c.labelSelector.matchLabels, podLabels));
  });

  test('ports: container port = Service targetPort = PORT; Service is ClusterIP 80; the HTTPRoute targets the Service', () => {
    const port = Number(podSetting('PORT'));
    assert.equal(port, 8080);
    const http = (container.ports as Obj[]).find((p) => p.name === 'http');
    assert.equal(http?.containerPort, port);
    assert.equal(service.spec.type ?? 'ClusterIP', 'ClusterIP');
    assert.equal(service.spec.ports.length, 1);
    assert.equal(service.spec.ports[0].port, 80);
    assert.equal(resolvePort(service.spec.ports[0].targetPort), port);
    const refs = (route.spec.rules as Obj[]).flatMap((r) => (r.backendRefs ?? []) as Obj[]);
    assert.ok(refs.length >= 1, 'the route forwards somewhere');
    for (const ref of refs) {
      assert.equal(ref.kind ?? 'Service', 'Service');
      assert.equal(ref.name, service.metadata.name);
      assert.equal(ref.port, service.spec.ports[0].port);
    }
  });

  test('probes: liveness (process alive) and readiness (not draining) on their own paths, served by the server', () => {
    const healthSource = read('src', 'server', 'routes', 'health.ts');
    for (const kind of ['startupProbe', 'readinessProbe', 'livenessProbe']) {
      const probe: Obj = container[kind];
      assert.ok(probe?.httpGet, `${kind} is an httpGet probe`);
      assert.ok((HEALTH_PATHS as readonly string[]).includes(probe.httpGet.path), `${kind} path ${probe.httpGet.path}`);
      assert.equal(resolvePort(probe.httpGet.port), Number(podSetting('PORT')), `${kind} port`);
      assert.ok((probe.timeoutSeconds ?? 1) < (probe.periodSeconds ?? 10) || kind === 'startupProbe', `${kind} timeout below period`);
    }
    assert.ok(healthSource.includes('app.get(LIVENESS_PATH') && healthSource.includes('app.get(READINESS_PATH'), 'health.ts registers both probes');
    assert.equal(container.livenessProbe.httpGet.path, LIVENESS_PATH);
    assert.equal(container.readinessProbe.httpGet.path, READINESS_PATH);
    assert.equal(container.startupProbe.httpGet.path, LIVENESS_PATH, 'startup waits for the process, not for readiness');
    assert.notEqual(LIVENESS_PATH, READINESS_PATH);
    // Liveness gives a hung process time; readiness reacts within two periods.
    const l = container.livenessProbe, r = container.readinessProbe;
    assert.ok(l.periodSeconds * l.failureThreshold > r.periodSeconds * r.failureThreshold, 'liveness is the slower trigger');
    const st = container.startupProbe;
    assert.ok(st.periodSeconds * st.failureThreshold >= 20, 'startup allowance of at least 20 s');
  });

  test('security: non-root, read-only root filesystem, no privilege escalation, no capabilities, seccomp', () => {
    const pod: Obj = podSpec.securityContext;
    const c: Obj = container.securityContext;
    assert.equal(pod.runAsNonRoot, true);
    assert.equal(c.runAsNonRoot ?? pod.runAsNonRoot, true);
    // USER node in the image is a name: runAsNonRoot needs a numeric uid to be verifiable.
    const uid = c.runAsUser ?? pod.runAsUser;
    assert.ok(Number.isInteger(uid) && uid > 0, 'numeric non-root runAsUser');
    assert.equal(c.readOnlyRootFilesystem, true);
    assert.equal(c.allowPrivilegeEscalation, false);
    assert.notEqual(c.privileged, true);
    assert.deepEqual(c.capabilities?.drop, ['ALL']);
    assert.equal(c.capabilities?.add, undefined);
    assert.equal((c.seccompProfile ?? pod.seccompProfile)?.type, 'RuntimeDefault');
    assert.equal(podSpec.automountServiceAccountToken, false);
    assert.notEqual(podSpec.hostNetwork, true);
    // A writable /tmp on an emptyDir.
    const tmp = (container.volumeMounts as Obj[]).find((m) => m.mountPath === '/tmp');
    assert.ok(tmp, '/tmp mounted');
    const vol = (podSpec.volumes as Obj[]).find((v) => v.name === tmp.name);
    assert.ok(vol?.emptyDir, '/tmp is an emptyDir');
    assert.ok(vol.emptyDir.sizeLimit, 'emptyDir has a sizeLimit');
  });

  test('resources: requests and limits set; V2A_WORKERS = CPU limit; memory covers the in-flight images', () => {
    const { requests, limits } = container.resources as Obj;
    for (const r of ['cpu', 'memory']) {
      assert.ok(requests?.[r] !== undefined, `requests.${r}`);
      assert.ok(limits?.[r] !== undefined, `limits.${r}`);
      assert.ok(quantity(requests[r]) <= quantity(limits[r]), `${r} request <= limit`);
    }
    const workers = Number(configData.V2A_WORKERS);
    assert.ok(Number.isInteger(workers) && workers >= 1, 'V2A_WORKERS set explicitly (its default is the node core count)');
    assert.equal(workers, quantity(limits.cpu), 'V2A_WORKERS = CPU limit');
    // deploy/README.md "Sizing": limit = base + workers x (worker + render) + queue x upload, from
    // deploy/measure-memory.ts (50 MP PNG/JPEG, 400 columns, colour JSON) and the queued-upload
    // measurement; 20-60 % headroom for GC timing and allocator fragmentation.
    const cfg = loadConfig({ ...configData });
    assert.ok(MEASURED_MIB.workerHeap < WORKER_OLD_SPACE_MB, 'the heap term is what the workers\' initial old generation allows');
    const formula = MEASURED_MIB.base + cfg.workers * (MEASURED_MIB.workerIdle + MEASURED_MIB.workerHeap + MEASURED_MIB.render) + (cfg.workers + cfg.queueLimit) * MEASURED_MIB.body;
    const limitMiB = quantity(limits.memory) / 2 ** 20;
    assert.ok(limitMiB >= formula * 1.2 && limitMiB <= formula * 1.6, `memory limit ${limits.memory} = formula ${formula} MiB + 20..60 %`);
    assert.equal(quantity(requests.memory), quantity(limits.memory), 'memory request = limit (no overcommit of what a render needs)');
    assert.ok(read('deploy', 'README.md').includes(`${MEASURED_MIB.render} MiB`), 'README states the per-render ceiling');
    assert.ok(read('deploy', 'README.md').includes(`= ${formula} MiB`), `deploy/README states the formula's ${formula} MiB`);
    assert.ok(quantity(requests['ephemeral-storage'] ?? 0) > 0 || limits['ephemeral-storage'], 'ephemeral storage accounted');
  });

  test('settings: the ConfigMap holds only settings config.ts knows, with values it accepts', () => {
    assert.ok(Object.keys(configData).length > 0);
    for (const [name, value] of Object.entries(configData)) {
      const entry = settings.get(name);
      assert.ok(entry, `${name} is a setting describeConfig() lists`);
      assert.ok(!entry.secret, `${name} is a secret: not in a ConfigMap`);
      assert.ok(!entry.testOnly, `${name} is test-only`);
      assert.equal(typeof value, 'string', `${name} is a string`);
    }
    for (const name of ['V2A_IMAGE_FETCH_ALLOWLIST', 'V2A_RATE_LIMIT', 'V2A_SHUTDOWN_TIMEOUT_MS', 'V2A_MAX_IMAGE_BYTES']) {
      assert.ok(name in configData, `${name} in the ConfigMap`);
    }
    assert.equal(configData.V2A_IMAGE_FETCH_ALLOWLIST, '', 'no imageUrl host allowed by default');
    const cfg = loadConfig({ ...configData });
    assert.equal(cfg.port, 8080);
    assert.deepEqual(cfg.imageFetchAllowlist, []);
    // Values that are the server's defaults are written as such.
    for (const name of ['PORT', 'HOST', 'V2A_MAX_IMAGE_BYTES', 'V2A_MAX_IMAGE_PIXELS', 'V2A_RATE_LIMIT', 'V2A_SHUTDOWN_TIMEOUT_MS', 'V2A_RENDER_TIMEOUT_MS', 'V2A_FETCH_TIMEOUT_MS']) {
      assert.equal(configData[name], defaultOf(name), `${name} default`);
    }
    // The secret comes from a Secret, never a literal.
    const env = (container.env ?? []) as Obj[];
    // Besides the settings, only the allocator's knob the README asks for (glibc arenas).
    const runtime: Record<string, string> = { MALLOC_ARENA_MAX: '2' };
    for (const e of env) {
      if (e.name in runtime) {
        assert.equal(e.value, runtime[e.name], `${e.name} as the README asks`);
        continue;
      }
      assert.ok(settings.has(e.name), `${e.name} is a setting`);
      if (settings.get(e.name)!.secret) assert.ok(e.valueFrom?.secretKeyRef && e.value === undefined, `${e.name} from a Secret`);
    }
    assert.ok((container.envFrom as Obj[]).some((f) => f.configMapRef?.name === configMap.metadata.name), 'envFrom the ConfigMap');
    assert.equal(podSpec.enableServiceLinks, false, 'no V2A_* service-link variables');
  });

  test('shutdown: grace period > preStop sleep + V2A_SHUTDOWN_TIMEOUT_MS', () => {
    const grace = podSpec.terminationGracePeriodSeconds as number;
    const cmd = container.lifecycle?.preStop?.exec?.command as string[] | undefined;
    const sleep = container.lifecycle?.preStop?.sleep?.seconds ?? (cmd?.[0] === 'sleep' ? Number(cmd[1]) : NaN);
    assert.ok(sleep >= 5 && sleep <= 30, `preStop sleep ${sleep}s`);
    const shutdownMs = Number(podSetting('V2A_SHUTDOWN_TIMEOUT_MS'));
    assert.ok(grace * 1000 > Number(defaultOf('V2A_SHUTDOWN_TIMEOUT_MS')), 'grace period > default shutdown timeout');
    assert.ok(grace * 1000 > sleep * 1000 + shutdownMs, `grace ${grace}s > preStop ${sleep}s + shutdown ${shutdownMs}ms`);
  });

  test('rollout, HPA and PDB', () => {
    assert.equal(deployment.spec.replicas, undefined, 'no replicas under an HPA (every apply would reset the count)');
    assert.equal(deployment.spec.strategy.rollingUpdate.maxUnavailable, 0);
    assert.deepEqual(hpa.spec.scaleTargetRef, { apiVersion: 'apps/v1', kind: 'Deployment', name: deployment.metadata.name });
    assert.equal(hpa.spec.minReplicas, 3);
    assert.equal(hpa.spec.maxReplicas, 20);
    const cpu = (hpa.spec.metrics as Obj[]).find((m) => m.type === 'Resource' && m.resource.name === 'cpu');
    assert.equal(cpu?.resource.target.type, 'Utilization');
    assert.ok(cpu.resource.target.averageUtilization >= 50 && cpu.resource.target.averageUtilization <= 80);
    // Either form, and one that leaves room to drain a node with the minimum replica count.
    const { minAvailable, maxUnavailable } = pdb.spec;
    assert.ok((minAvailable === undefined) !== (maxUnavailable === undefined), 'exactly one of minAvailable / maxUnavailable');
    if (minAvailable !== undefined) assert.ok(minAvailable < hpa.spec.minReplicas);
    else assert.ok(maxUnavailable >= 1);
  });

  test('Gateway API: the HTTPRoute forwards everything but the metrics, with a request timeout above the service budgets', () => {
    const parent = (route.spec.parentRefs as Obj[])[0]!;
    assert.equal(parent.kind ?? 'Gateway', 'Gateway');
    assert.ok(parent.name, 'parentRefs names a Gateway');
    const rules = route.spec.rules as Obj[];
    const main = rules.find((r) => (r.matches as Obj[]).some((m) => m.path?.type === 'PathPrefix' && m.path.value === '/'));
    assert.ok(main?.backendRefs?.length, 'PathPrefix / forwards to the Service');
    const budget = (Number(podSetting('V2A_FETCH_TIMEOUT_MS')) + Number(podSetting('V2A_RENDER_TIMEOUT_MS'))) / 1000;
    assert.ok(duration(main.timeouts?.request) > budget, `timeouts.request ${main.timeouts?.request} > fetch + render ${budget}s`);
    const metricsRule = rules.find((r) => (r.matches as Obj[]).some((m) => m.path?.type === 'Exact' && m.path.value === ENDPOINTS.metrics.path));
    assert.ok(metricsRule, 'an Exact rule for the metrics path');
    assert.equal(metricsRule.backendRefs, undefined, 'the metrics rule forwards nothing (scrapes stay in the cluster)');
    assert.equal((route.spec.hostnames as string[]).length, 1);
  });

  test('Gateway body-size limits (Envoy Gateway, NGINX Gateway Fabric, Traefik) fit the largest accepted request and target the route', () => {
    const maxBytes = Number(podSetting('V2A_MAX_IMAGE_BYTES'));
    const limits: Record<string, number> = {
      'envoy-gateway': quantity(componentDoc('envoy-gateway', 'BackendTrafficPolicy').spec.requestBuffer.limit),
      'nginx-gateway-fabric': nginxSize(componentDoc('nginx-gateway-fabric', 'ClientSettingsPolicy').spec.body.maxSize),
      traefik: componentDoc('traefik', 'Middleware').spec.buffering.maxRequestBodyBytes,
    };
    for (const [impl, limit] of Object.entries(limits)) {
      assert.ok(limit >= jsonBodyLimit(maxBytes), `${impl}: ${limit} >= JSON base64 body of ${maxBytes} bytes (${jsonBodyLimit(maxBytes)})`);
      assert.ok(limit >= maxBytes + 64 * 1024, `${impl}: multipart image + part overhead`);
      assert.ok(limit <= jsonBodyLimit(maxBytes) * 1.25, `${impl}: not much larger than the server accepts`);
    }
    const toRoute = (ref: Obj) => ref.group === 'gateway.networking.k8s.io' && ref.kind === 'HTTPRoute' && ref.name === route.metadata.name;
    assert.ok((componentDoc('envoy-gateway', 'BackendTrafficPolicy').spec.targetRefs as Obj[]).every(toRoute));
    assert.ok(toRoute(componentDoc('nginx-gateway-fabric', 'ClientSettingsPolicy').spec.targetRef));
    // Traefik: the Middleware is attached to the forwarding rule by the component's patch.
    const traefik = componentDoc('traefik', 'Component');
    const patch = (traefik.patches as Obj[])[0]!;
    assert.equal(patch.target.kind, 'HTTPRoute');
    assert.equal(patch.target.name, route.metadata.name);
    const ops = parseAllDocuments(patch.patch)[0]!.toJS() as Obj[];
    assert.equal(ops[0]!.path, '/spec/rules/0/filters');
    assert.ok((route.spec.rules as Obj[])[0]!.backendRefs, 'rule 0 is the forwarding rule');
    assert.deepEqual(ops[0]!.value[0].extensionRef, { group: 'traefik.io', kind: 'Middleware', name: componentDoc('traefik', 'Middleware').metadata.name });
  });

  test('Traefik closes idle upstream connections after 90 s: its component keeps the server\'s keep-alive longer', () => {
    const traefik = componentDoc('traefik', 'Component');
    const patch = (traefik.patches as Obj[]).find((p) => p.target.kind === 'ConfigMap');
    assert.ok(patch, 'a ConfigMap patch');
    assert.equal(patch.target.name, configMap.metadata.name);
    const ops = parseAllDocuments(patch.patch)[0]!.toJS() as Obj[];
    const keepAlive = ops.find((o) => o.path === '/data/V2A_KEEP_ALIVE_TIMEOUT_MS');
    assert.ok(keepAlive && Number(keepAlive.value) > 90_000, 'above Traefik\'s idleConnTimeout');
    // A setting the server knows, in range.
    assert.equal(loadConfig({ V2A_KEEP_ALIVE_TIMEOUT_MS: keepAlive.value }).keepAliveTimeoutMs, Number(keepAlive.value));
  });

  test('components: every kustomize component lists its files; each object has an expected kind and the labels', () => {
    assert.deepEqual(componentNames, ['envoy-gateway', 'network-policy', 'nginx-gateway-fabric', 'prometheus-operator', 'traefik']);
    for (const [name, docs] of componentDocs) {
      const comp = componentDoc(name, 'Component');
      const files = readdirSync(join(COMPONENTS, name)).filter((f) => /\.ya?ml$/.test(f) && f !== 'kustomization.yaml').sort();
      assert.deepEqual([...(comp.resources as string[])].sort(), files, `components/${name} lists its files`);
      for (const { file, doc } of docs) {
        assert.equal(doc.apiVersion, COMPONENT_KINDS[doc.kind], `${file}: ${doc.kind}`);
        if (doc.kind !== 'Component') assert.equal(doc.metadata.labels?.['app.kubernetes.io/name'], 'v2a', `${file}: labels`);
      }
    }
    // The base names every component in its (commented) components list.
    const base = read('deploy', 'k8s', 'kustomization.yaml');
    for (const name of componentNames) assert.ok(base.includes(`components/${name}`), `kustomization.yaml mentions components/${name}`);
  });

  test('the NetworkPolicy admits only labelled namespaces, on the pods\' http port, to the Deployment\'s pods (V2A_TRUST_PROXY relies on it)', () => {
    const policy = componentDoc('network-policy', 'NetworkPolicy');
    const pod = deployment.spec.template;
    for (const [k, v] of Object.entries(policy.spec.podSelector.matchLabels as Record<string, string>)) assert.equal(pod.metadata.labels[k], v, `selects the pods: ${k}`);
    assert.deepEqual(policy.spec.policyTypes, ['Ingress']);
    assert.deepEqual(policy.spec.ingress, [{ from: [{ namespaceSelector: { matchLabels: { 'v2a.dev/ingress': 'allowed' } } }], ports: [{ port: 'http', protocol: 'TCP' }] }]);
    assert.ok((pod.spec.containers[0].ports as Obj[]).some((p) => p.name === 'http'), 'the port is the container\'s');
    assert.match(read('deploy', 'k8s', 'components', 'network-policy', 'kustomization.yaml'), /kubectl label namespace .* v2a\.dev\/ingress=allowed/);
    assert.notEqual(configData.V2A_TRUST_PROXY, 'false');
  });

  test('metrics: V2A_METRICS on; the ServiceMonitor and the scrape annotations reach the metrics path on the Service port', () => {
    assert.equal(configData.V2A_METRICS, 'on');
    const sm = componentDoc('prometheus-operator', 'ServiceMonitor');
    assert.ok(selects(sm.spec.selector.matchLabels, service.metadata.labels), 'ServiceMonitor selects the Service');
    const ep = (sm.spec.endpoints as Obj[])[0]!;
    assert.ok((service.spec.ports as Obj[]).some((p) => p.name === ep.port), 'endpoint port is a Service port name');
    assert.equal(ep.path, ENDPOINTS.metrics.path);
    assert.ok(duration(ep.scrapeTimeout) < duration(ep.interval));
    // With the key configured the endpoint asks for it: the scrape sends the same Secret the pod reads.
    const keyRef = (container.env as Obj[]).find((e) => e.name === 'PLATFORM_API_KEY')!.valueFrom.secretKeyRef;
    assert.equal(ep.authorization.credentials.name, keyRef.name);
    assert.equal(ep.authorization.credentials.key, keyRef.key);
    const annotations = deployment.spec.template.metadata.annotations as Record<string, string>;
    assert.equal(annotations['prometheus.io/scrape'], 'true');
    assert.equal(annotations['prometheus.io/path'], ENDPOINTS.metrics.path);
    assert.equal(Number(annotations['prometheus.io/port']), Number(podSetting('PORT')));
  });
});

/** Gateway API / Prometheus durations used here: `60s`, `1m`, `500ms`. */
function duration(d: string | undefined): number {
  const m = /^(\d+)(ms|s|m|h)$/.exec(d ?? '');
  assert.ok(m, `duration ${d}`);
  return Number(m[1]) * { ms: 0.001, s: 1, m: 60, h: 3600 }[m[2] as 'ms' | 's' | 'm' | 'h'];
}

/** NGINX sizes: `24m`, `512k`, bytes. */
function nginxSize(size: string): number {
  const m = /^(\d+)([kmg]?)$/i.exec(size);
  assert.ok(m, `nginx size ${size}`);
  return Number(m[1]) * { '': 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3 }[m[2]!.toLowerCase() as '' | 'k' | 'm' | 'g'];
}

// ---------------------------------------------------------------------------------------------
// Offline schema validation: every object against the published schemas of its API (npm
// kubernetes-models for the core kinds, @kubernetes-models/gateway-api, /prometheus-operator,
// /traefik), then the same objects as TypeScript literals of those models' types, whose excess
// property checks catch the unknown or misspelt fields (`replica:`) that JSON-schema validation
// lets through and a strict API server refuses. Envoy Gateway and NGINX Gateway Fabric publish no
// npm schema: their policies are checked field by field above.

/** apiVersion/kind -> [module, export] of the model class (and its `I<Kind>` interface). */
const MODELS: Record<string, readonly [string, string]> = {
  'v1/ConfigMap': ['kubernetes-models/v1', 'ConfigMap'],
  'v1/Service': ['kubernetes-models/v1', 'Service'],
  'apps/v1/Deployment': ['kubernetes-models/apps/v1', 'Deployment'],
  'autoscaling/v2/HorizontalPodAutoscaler': ['kubernetes-models/autoscaling/v2', 'HorizontalPodAutoscaler'],
  'policy/v1/PodDisruptionBudget': ['kubernetes-models/policy/v1', 'PodDisruptionBudget'],
  'gateway.networking.k8s.io/v1/HTTPRoute': ['@kubernetes-models/gateway-api/gateway.networking.k8s.io/v1', 'HTTPRoute'],
  'monitoring.coreos.com/v1/ServiceMonitor': ['@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1', 'ServiceMonitor'],
  'traefik.io/v1alpha1/Middleware': ['@kubernetes-models/traefik/traefik.io/v1alpha1', 'Middleware'],
  'networking.k8s.io/v1/NetworkPolicy': ['kubernetes-models/networking.k8s.io/v1', 'NetworkPolicy'],
};
/** Kinds with no schema on npm (checked by the tests above instead). */
const NO_SCHEMA = new Set(['Kustomization', 'Component', 'BackendTrafficPolicy', 'ClientSettingsPolicy']);

const everyObject = (): { file: string; doc: Obj }[] => [
  ...[...docsByFile].flatMap(([file, docs]) => docs.map((doc) => ({ file, doc }))),
  ...[...componentDocs.values()].flat(),
];

describe('manifests against their API schemas (offline)', () => {
  test('every object validates against its model\'s schema; every kind has one or is checked above', async () => {
    let validated = 0;
    for (const { file, doc } of everyObject()) {
      if (NO_SCHEMA.has(doc.kind)) continue;
      const model = MODELS[`${doc.apiVersion}/${doc.kind}`];
      assert.ok(model, `${file}: a schema for ${doc.apiVersion} ${doc.kind}`);
      const mod = (await import(model[0])) as Record<string, new (data: unknown) => { validate(): void }>;
      const instance = new mod[model[1]]!(doc);
      assert.doesNotThrow(() => instance.validate(), `${file}: ${doc.kind} ${doc.metadata?.name}`);
      validated++;
    }
    assert.equal(validated, Object.keys(MODELS).length, 'each model validated one object');
    // The validators can fail: a wrong type is refused.
    const { Deployment } = await import('kubernetes-models/apps/v1');
    const broken = structuredClone(deployment);
    broken.spec.template.spec.containers[0].ports[0].containerPort = 'http';
    assert.throws(() => new Deployment(broken).validate(), /containerPort/);
  });

  test('no unknown fields: each object compiles as a literal of its model\'s TypeScript type', { timeout: 120_000 }, () => {
    const dir = mkdtempSync(join(ROOT, 'test', '.k8s-types-'));
    try {
      const imports = new Map<string, string[]>();
      const lines: string[] = [];
      const typo = structuredClone(deployment);
      typo.spec.replica = 3;
      const objects = [...everyObject().filter(({ doc }) => !NO_SCHEMA.has(doc.kind)), { file: 'typo', doc: typo }];
      objects.forEach(({ file, doc }, i) => {
        const [mod, name] = MODELS[`${doc.apiVersion}/${doc.kind}`]!;
        imports.set(mod, [...(imports.get(mod) ?? []), `I${name}`]);
        lines.push(`// ${file}\nexport const o${i}: I${name} = ${JSON.stringify(doc)};`);
      });
      const head = [...imports].map(([mod, names]) => `import type { ${[...new Set(names)].join(', ')} } from '${mod}';`);
      writeFileSync(join(dir, 'objects.ts'), `${head.join('\n')}\n${lines.join('\n')}\n`);
      writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({
        compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, noEmit: true, skipLibCheck: true, types: [] },
        files: ['objects.ts'],
      }));
      const r = spawnSync(process.execPath, [join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', dir, '--pretty', 'false'], { encoding: 'utf8', timeout: 110_000 });
      const errors = r.stdout.split('\n').filter((l) => /error TS/.test(l));
      const typoLine = head.length + 2 * objects.length;
      // Exactly one error: the deliberate typo (which proves the check can fail), on its own line.
      assert.equal(errors.length, 1, r.stdout);
      assert.match(errors[0]!, new RegExp(`objects\\.ts\\(${typoLine},\\d+\\): error TS(2353|2561)\\b.*\\breplica\\b`), r.stdout);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

// ---------------------------------------------------------------------------------------------
// Dockerfile

interface Instruction {
  readonly op: string;
  readonly args: string;
}

interface Stage {
  readonly image: string;
  readonly name: string | undefined;
  readonly instructions: Instruction[];
}

/** Instructions (continuations joined, comments dropped) grouped by stage, ARGs before FROM resolved. */
function parseDockerfile(text: string): { globalArgs: Record<string, string>; stages: Stage[] } {
  const logical: string[] = [];
  let pending = '';
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (pending === '' && (line === '' || line.startsWith('#'))) continue;
    if (pending !== '' && line.startsWith('#')) continue;
    if (line.endsWith('\\')) {
      pending += `${line.slice(0, -1).trim()} `;
      continue;
    }
    logical.push((pending + line).trim());
    pending = '';
  }
  assert.equal(pending, '', 'no dangling line continuation');
  const globalArgs: Record<string, string> = {};
  const stages: Stage[] = [];
  for (const line of logical) {
    const m = /^(\S+)\s*(.*)$/.exec(line)!;
    const op = m[1]!.toUpperCase();
    const args = m[2]!;
    if (op === 'FROM') {
      const f = /^(?:--platform=\S+\s+)?(\S+)(?:\s+AS\s+(\S+))?$/i.exec(args);
      assert.ok(f, `FROM ${args}`);
      const image = f[1]!.replace(/\$\{?(\w+)\}?/g, (_, v: string) => globalArgs[v] ?? '');
      stages.push({ image, name: f[2], instructions: [] });
    } else if (stages.length === 0) {
      assert.equal(op, 'ARG', `only ARG before the first FROM (got ${op})`);
      const a = /^(\w+)(?:=(.*))?$/.exec(args)!;
      globalArgs[a[1]!] = a[2] ?? '';
    } else {
      stages.at(-1)!.instructions.push({ op, args });
    }
  }
  return { globalArgs, stages };
}

const dockerfile = parseDockerfile(read('Dockerfile'));
const finalStage = dockerfile.stages.at(-1)!;
const finalOps = (op: string) => finalStage.instructions.filter((i) => i.op === op);
/** The last HEALTHCHECK's command, exec form (JSON array) or shell form. */
function healthcheckCommand(): string[] {
  const hc = finalOps('HEALTHCHECK').at(-1);
  assert.ok(hc, 'HEALTHCHECK present');
  const m = /\bCMD\s+(.*)$/.exec(hc.args);
  assert.ok(m, 'HEALTHCHECK CMD');
  return m[1]!.startsWith('[') ? (JSON.parse(m[1]!) as string[]) : ['/bin/sh', '-c', m[1]!];
}

const REFERENCE_NODE_MAJOR = 24;

describe('Dockerfile', () => {
  test('multi-stage, glibc Node base (not Alpine) meeting package.json engines', () => {
    assert.ok(dockerfile.stages.length >= 2, 'multi-stage');
    const engines = (JSON.parse(read('package.json')) as { engines: { node: string } }).engines.node;
    const minMajor = Number(/(\d+)/.exec(engines)![1]);
    for (const stage of dockerfile.stages) {
      assert.match(stage.image, /^(docker\.io\/library\/)?node:/, `${stage.image} is a Node image`);
      assert.match(stage.image, /bookworm|bullseye|trixie/, `${stage.image}: Debian (glibc)`);
      assert.doesNotMatch(stage.image, /alpine|musl/, `${stage.image}: not musl`);
      const major = Number(/node:(\d+)/.exec(stage.image)?.[1]);
      assert.ok(major >= minMajor, `Node ${major} satisfies engines ${engines}`);
      // The reference runtime: Node 24 LTS, the major .ci/run runs the suite on besides the machine's.
      assert.equal(major, REFERENCE_NODE_MAJOR, `${stage.image} is on Node ${REFERENCE_NODE_MAJOR} LTS`);
      assert.match(stage.image, /-slim$/, `${stage.image}: the slim variant`);
    }
  });

  test('build stage: npm ci and the build', () => {
    const build = dockerfile.stages.slice(0, -1);
    const runs = build.flatMap((s) => s.instructions.filter((i) => i.op === 'RUN').map((i) => i.args));
    assert.ok(runs.some((r) => /\bnpm ci\b/.test(r)), 'npm ci in the build stage');
    assert.ok(runs.some((r) => /\bnpm run build\b|\btsc\b/.test(r)), 'build in the build stage');
    // What the build copies exists in the repository and is in the build context: .dockerignore's
    // rules applied as Docker applies them (a folder's rule covers what is in it, the last
    // matching rule wins, ! takes a path back).
    const rules = read('.dockerignore').split('\n').map((l) => l.trim()).filter((l) => l && !l.startsWith('#'));
    for (const stage of dockerfile.stages) {
      for (const copy of stage.instructions.filter((i) => i.op === 'COPY' && !/--from=/.test(i.args))) {
        const sources = copy.args.split(/\s+/).filter((w) => !w.startsWith('--')).slice(0, -1);
        for (const src of sources) {
          assert.ok(existsSync(join(ROOT, src)), `COPY source ${src} exists`);
          assert.ok(!dockerIgnored(src.replace(/\/$/, ''), rules), `COPY source ${src} is in the build context (.dockerignore)`);
        }
      }
    }
    // The matcher itself, on the rules' own shapes.
    assert.ok(dockerIgnored('scripts/x.ts', ['scripts']) && !dockerIgnored('scripts/x.ts', ['scripts', '!scripts/x.ts']));
    assert.ok(dockerIgnored('a/b.log', ['**/*.log']) && !dockerIgnored('src', ['bench']));
    // tsconfig.build.json compiles src/ to dist/, which the runtime copies and runs.
    const tsBuild = JSON.parse(read('tsconfig.build.json')) as { compilerOptions: { rootDir: string; outDir: string } };
    assert.equal(tsBuild.compilerOptions.rootDir, 'src');
    assert.equal(tsBuild.compilerOptions.outDir, 'dist');
  });

  test('runtime stage: npm ci --omit=dev, dist from the build, USER node, ENV, EXPOSE, HEALTHCHECK, STOPSIGNAL, CMD', () => {
    const runs = finalOps('RUN').map((i) => i.args);
    assert.ok(runs.some((r) => /\bnpm ci\b.*--omit=dev/.test(r)), 'npm ci --omit=dev');
    assert.ok(runs.some((r) => /--ignore-scripts/.test(r)), '--ignore-scripts (no production install scripts)');
    // The span export's optional peers (left out by --omit=dev) come from the build stage's
    // lock-pinned install, and nothing they depend on lies outside the @opentelemetry scope.
    assert.ok(finalOps('COPY').some((c) => /--from=\S+\s+\S*node_modules\/@opentelemetry\s+\S*node_modules\/@opentelemetry/.test(c.args)), 'OpenTelemetry SDK copied into the image');
    const lock = JSON.parse(read('package-lock.json')) as { packages: Record<string, { dependencies?: Record<string, string> }> };
    for (const [path, entry] of Object.entries(lock.packages)) {
      if (!path.startsWith('node_modules/@opentelemetry/')) continue;
      for (const dep of Object.keys(entry.dependencies ?? {})) assert.ok(dep.startsWith('@opentelemetry/'), `${path} needs ${dep}, outside the copied scope`);
    }
    assert.ok(finalOps('COPY').some((c) => /--from=\S+\s+\S*dist\/?\s/.test(`${c.args} `)), 'dist copied from the build stage');
    const users = finalOps('USER');
    assert.ok(users.length > 0, 'USER set in the final stage');
    const user = users.at(-1)!.args.split(':')[0];
    assert.equal(user, 'node', 'runs as the non-root node user');
    const env = finalOps('ENV').map((e) => e.args).join(' ');
    assert.match(env, /\bNODE_ENV=production\b/);
    const envPort = /\bPORT=(\d+)/.exec(env)?.[1];
    assert.equal(envPort, defaultOf('PORT'), 'ENV PORT = the default PORT');
    const exposed = finalOps('EXPOSE').flatMap((e) => e.args.split(/\s+/)).map((p) => p.replace(/\/tcp$/, ''));
    assert.deepEqual(exposed, [defaultOf('PORT')], 'EXPOSE = PORT');
    assert.equal(String(container.ports[0].containerPort), defaultOf('PORT'), 'EXPOSE = containerPort');
    assert.ok(healthcheckCommand().join(' ').includes('/api/health'), 'HEALTHCHECK probes /api/health');
    assert.equal(finalOps('STOPSIGNAL').at(-1)?.args, 'SIGTERM');
    const cmd = finalOps('CMD').at(-1);
    assert.ok(cmd, 'CMD');
    assert.deepEqual(JSON.parse(cmd.args), ['node', 'dist/server/main.cjs'], 'exec-form CMD runs the server (signals reach node)');
    const scripts = (JSON.parse(read('package.json')) as { scripts: Record<string, string> }).scripts;
    assert.equal(scripts.start, 'node dist/server/main.cjs', 'same as npm start');
    // npm start runs prestart first: every file it names is in the image (it was not: npm start failed).
    const copied = finalOps('COPY').map((c) => c.args.split(/\s+/).filter((a) => !a.startsWith('--')));
    for (const file of (scripts.prestart ?? '').match(/\bscripts\/\S+/g) ?? []) {
      assert.ok(copied.some((args) => args.slice(0, -1).some((src) => src === file || src.endsWith(`/${file}`)) && /scripts\/?$/.test(args.at(-1)!)), `${file} (prestart) copied into the image`);
    }
    assert.equal(finalOps('ENTRYPOINT').length, 0, 'no entrypoint wrapper between the runtime and node');
  });

  test('.ci/run runs the suite on the machine\'s Node and on the reference Node from the npm registry', () => {
    const ci = read('.ci', 'run');
    assert.match(ci, new RegExp(`REFERENCE_MAJOR=${REFERENCE_NODE_MAJOR}\\b`));
    assert.match(ci, /npx --yes --package "node@\$REFERENCE_MAJOR"/, 'Node 24 from the npm `node` package');
    assert.match(ci, /^npm test$/m, 'npm test on the machine\'s Node');
    assert.match(ci, /&& npm test"$/m, 'npm test on the reference Node');
  });

  test('.dockerignore keeps local state out of the context', () => {
    const lines = new Set(read('.dockerignore').split('\n').map((l) => l.trim().replace(/^\/|\/$/g, '')).filter(Boolean));
    for (const entry of ['node_modules', 'dist', '.git', 'tmp', 'bench/.cache', 'bench/out', 'test/out']) {
      assert.ok(lines.has(entry) || lines.has(entry.split('/')[0]!), `${entry} ignored`);
    }
    for (const needed of ['src', 'package.json', 'package-lock.json', 'tsconfig.json', 'tsconfig.build.json']) {
      assert.ok(!lines.has(needed), `${needed} not ignored`);
    }
  });

  test('no production dependency needs an install script (the runtime installs with --ignore-scripts)', () => {
    const lock = JSON.parse(read('package-lock.json')) as { packages: Record<string, { dev?: boolean; hasInstallScript?: boolean }> };
    const scripted = Object.entries(lock.packages).filter(([path, p]) => path !== '' && p.hasInstallScript && !p.dev).map(([path]) => path);
    assert.deepEqual(scripted, []);
    // sharp's native parts come as optional dependencies that npm picks by platform.
    const sharp = JSON.parse(read('node_modules', 'sharp', 'package.json')) as { scripts?: Record<string, string>; optionalDependencies?: Record<string, string> };
    assert.equal(sharp.scripts?.install, undefined);
    assert.ok(sharp.optionalDependencies?.['@img/sharp-linux-x64'] && sharp.optionalDependencies['@img/sharp-linux-arm64']);
    assert.ok(lock.packages['node_modules/@img/sharp-linux-x64'] && lock.packages['node_modules/@img/sharp-linux-arm64'], 'lock has the glibc binaries');
  });
});

// ---------------------------------------------------------------------------------------------
// The container's lifecycle, for real: start with the ConfigMap's settings, probes, SIGTERM, exit 0.

async function freePort(): Promise<number> {
  const srv = net.createServer();
  srv.listen(0, '127.0.0.1');
  await once(srv, 'listening');
  const { port } = srv.address() as AddressInfo;
  await new Promise((resolve) => srv.close(resolve));
  return port;
}

function runNode(args: string[], env: NodeJS.ProcessEnv, timeoutMs: number): Promise<number | null> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { env, stdio: 'ignore' });
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', reject);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve(code);
    });
  });
}

describe('the Dockerfile\'s HEALTHCHECK', () => {
  test('asks the address HOST names, loopback when HOST is every interface (it asked 127.0.0.1 whatever HOST said)', { timeout: 60_000 }, async () => {
    const hc = healthcheckCommand();
    const v6 = spawnSync('node', ['-e', "require('net').createServer().listen(0, '::1', function () { this.close(); }).on('error', () => process.exit(1))"]).status === 0;
    for (const host of ['127.0.0.2', '0.0.0.0', ...(v6 ? ['::1', '::'] : [])]) {
      const running = await startServer(loadConfig({ HOST: host, PORT: '0', V2A_WORKERS: '1', V2A_WARM_UP: 'false', LOG_LEVEL: 'silent' }), { handleSignals: false, logger: false });
      try {
        const port = String((running.app.server.address() as AddressInfo).port);
        assert.equal(await runNode(hc.slice(1), { PATH: process.env.PATH ?? '', PORT: port, HOST: host }, 10_000), 0, `HOST=${host}`);
      } finally {
        await running.shutdown('test');
      }
    }
  });
});

describe('container lifecycle', () => {
  let child: ChildProcess | undefined;
  after(() => {
    if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });

  test('starts with the ConfigMap settings, answers the probes and the HEALTHCHECK, exits 0 on SIGTERM', { timeout: 45_000 }, async () => {
    const port = await freePort();
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      ...configData,
      NODE_ENV: 'production',
      PORT: String(port),
      HOST: '127.0.0.1',
      V2A_WORKERS: '1',
      // A misspelt setting: warned about, never silently left at its default.
      V2A_QUEUE_LIMT: '8',
      LOG_LEVEL: 'info',
    };
    // No key: nothing is exported and nothing leaves this machine.
    delete env.PLATFORM_API_KEY;
    // The image runs dist/server/main.cjs (which sizes libuv's pool, then imports main.js); main.js's source here (dist may be stale).
    child = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'src', 'server', 'main.ts')], {
      cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    let stdout = '';
    child.stdout!.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
      child!.on('exit', (code, signal) => resolve({ code, signal }));
    });

    const base = `http://127.0.0.1:${port}`;
    const deadline = Date.now() + 20_000;
    let up = false;
    while (!up && Date.now() < deadline && child.exitCode === null) {
      try {
        up = (await fetch(`${base}/api/health`, { signal: AbortSignal.timeout(1000) })).status === 200;
      } catch {
        await new Promise((r) => setTimeout(r, 100));
      }
    }
    assert.ok(up, `server came up (stderr: ${stderr})`);

    // Readiness: 503 `warming` while the worker warms up (V2A_WARM_UP, on by default), then 200.
    const warmBy = Date.now() + 30_000;
    for (;;) {
      const res = await fetch(`${base}${container.readinessProbe.httpGet.path}`);
      if (res.status === 200 || Date.now() > warmBy) break;
      assert.equal(res.status, 503);
      assert.equal(((await res.json()) as { status: string }).status, 'warming');
      await new Promise((r) => setTimeout(r, 100));
    }
    for (const kind of ['startupProbe', 'readinessProbe', 'livenessProbe']) {
      const res = await fetch(`${base}${container[kind].httpGet.path}`);
      assert.equal(res.status, 200, `${kind} ${container[kind].httpGet.path}`);
      const body = (await res.json()) as { status: string };
      assert.equal(body.status, kind === 'readinessProbe' ? 'ready' : 'alive');
    }
    // The start-up line of the effective configuration: every setting, secrets as set/unset only.
    const effective = stdout.split('\n').filter(Boolean).map((l) => JSON.parse(l) as Obj).find((l) => l.msg === 'effective configuration');
    assert.ok(effective, `effective configuration logged (stdout: ${stdout.slice(0, 500)})`);
    assert.deepEqual(Object.keys(effective.config).sort(), [...settings.keys()].sort());
    assert.equal(effective.config.V2A_MAX_IMAGE_BYTES, Number(configData.V2A_MAX_IMAGE_BYTES));
    assert.equal(effective.config.V2A_METRICS, true);
    assert.equal(effective.config.PLATFORM_API_KEY, '(unset)');
    assert.equal(effective.config.V2A_WARM_UP, true);
    const stray = stdout.split('\n').filter(Boolean).map((l) => JSON.parse(l) as Obj).find((l) => String(l.msg).startsWith('V2A_QUEUE_LIMT'));
    assert.deepEqual([stray?.level, stray?.msg], [40, 'V2A_QUEUE_LIMT is no v2a setting and is ignored (did you mean V2A_QUEUE_LIMIT?)']);
    const warm = stdout.split('\n').filter(Boolean).map((l) => JSON.parse(l) as Obj).find((l) => l.msg === 'render workers warm');
    assert.ok(warm && (warm.warmUpMs as number) > 0 && warm.workers === 1, 'the warm-up is logged once every worker is warm');

    // The Dockerfile's HEALTHCHECK, as Docker would run it inside the container.
    const hc = healthcheckCommand();
    assert.equal(hc[0], 'node');
    const hcEnv = { PATH: process.env.PATH ?? '', PORT: String(port) };
    assert.equal(await runNode(hc.slice(1), hcEnv, 10_000), 0, 'HEALTHCHECK passes while serving');

    const t0 = Date.now();
    child.kill('SIGTERM');
    const result = await Promise.race([
      exited,
      new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), 10_000).unref()),
    ]);
    assert.notEqual(result, 'timeout', 'exited within 10 s of SIGTERM');
    assert.deepEqual(result, { code: 0, signal: null }, `graceful exit 0 (stderr: ${stderr})`);
    assert.ok(Date.now() - t0 < 10_000);

    assert.equal(await runNode(hc.slice(1), hcEnv, 10_000), 1, 'HEALTHCHECK fails once the server is gone');
  });
});

// ---------------------------------------------------------------------------------------------
// Operations: the probes' semantics, the metrics switch, the start-up configuration line.

describe('operations', () => {
  const KEY = 'ops-test-key-0123456789abcdef0123456789';

  test('readiness turns 503 draining when shutdown begins; liveness stays 200', async () => {
    const s = await startTestServer({ V2A_WORKERS: '1' });
    try {
      assert.equal((await fetch(`${s.base}${READINESS_PATH}`)).status, 200);
      s.app.v2a.closing = true; // what shutdown sets first (start.ts)
      const ready = await fetch(`${s.base}${READINESS_PATH}`);
      assert.equal(ready.status, 503);
      assert.equal(((await ready.json()) as Obj).status, 'draining');
      const live = await fetch(`${s.base}${LIVENESS_PATH}`);
      assert.equal(live.status, 200, 'a draining pod is alive: no restart');
      assert.equal(((await live.json()) as Obj).status, 'alive');
    } finally {
      await s.close();
    }
  });

  test('V2A_METRICS: its own switch; open without a key, behind the key with one, 404 when off', async () => {
    const cases: [Record<string, string>, { anonymous: number; withKey?: number }][] = [
      [{}, { anonymous: 404 }],
      [{ V2A_METRICS: 'on' }, { anonymous: 200 }],
      [{ V2A_METRICS: 'off', PLATFORM_API_KEY: KEY }, { anonymous: 404, withKey: 404 }],
      [{ PLATFORM_API_KEY: KEY }, { anonymous: 401, withKey: 200 }],
      [{ V2A_METRICS: 'on', PLATFORM_API_KEY: KEY }, { anonymous: 401, withKey: 200 }],
    ];
    for (const [env, expected] of cases) {
      // A disabled telemetry: the switch is about metrics, not span export.
      const s = await startTestServer({ V2A_WORKERS: '1', V2A_RECEIVER_STATUS_URL: 'off', ...env }, { telemetry: await createTelemetry({ key: undefined }) });
      try {
        const anonymous = await fetch(`${s.base}${ENDPOINTS.metrics.path}`);
        assert.equal(anonymous.status, expected.anonymous, `${JSON.stringify(env)} anonymous`);
        if (anonymous.status === 200) {
          assert.match(await anonymous.text(), /^# HELP /m);
          // Only as spelt: the router would decode these to the path a proxy hides by exact match.
          for (const other of ['/api/v1/%6detrics', '/api/v1/metric%73', '/api/%761/metrics']) {
            assert.equal((await fetch(`${s.base}${other}`)).status, 404, other);
          }
        }
        if (expected.withKey !== undefined) {
          const keyed = await fetch(`${s.base}${ENDPOINTS.metrics.path}`, { headers: { authorization: `Bearer ${KEY}` } });
          assert.equal(keyed.status, expected.withKey, `${JSON.stringify(env)} with the key`);
        }
      } finally {
        await s.close();
      }
    }
    assert.throws(() => loadConfig({ V2A_METRICS: 'sometimes' }), /V2A_METRICS must be true or false/);
  });

  test('start-up logs the effective configuration without secret values', async () => {
    const lines: Obj[] = [];
    const stream = new Writable({ write(chunk, _enc, done) { for (const l of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(l) as Obj); done(); } });
    const config = loadConfig({ PORT: '0', HOST: '127.0.0.1', V2A_WORKERS: '1', PLATFORM_API_KEY: KEY, V2A_RECEIVER_STATUS_URL: 'off', V2A_METRICS: 'on' });
    const server = await startServer(config, { handleSignals: false, logger: { level: 'info', stream }, telemetry: await createTelemetry({ key: undefined }) });
    try {
      const line = lines.find((l) => l.msg === 'effective configuration');
      assert.ok(line, 'logged at start');
      assert.equal(line.config.PLATFORM_API_KEY, '(set)');
      assert.equal(line.config.V2A_WORKERS, 1);
      assert.equal(line.config.V2A_METRICS, true);
      assert.equal(line.url, server.url);
      assert.ok(!JSON.stringify(lines).includes(KEY), 'the key appears in no log line');
      assert.ok(lines.some((l) => /serving Prometheus metrics/.test(l.msg) && l.key === true));
      // The line names an OTLP endpoint; the telemetry here exports nothing, and the log says so.
      assert.ok(lines.some((l) => l.msg === 'span export off: the OTEL_* settings are not used' && l.reason === 'PLATFORM_API_KEY is not set'));
      assert.ok(!lines.some((l) => /exporting spans/.test(l.msg)));
      assert.ok(!lines.some((l) => /V2A_MAX_CONNECTIONS/.test(l.msg)), 'connections enough');
    } finally {
      await server.shutdown('test');
    }
  });

  test('start-up warns when V2A_MAX_CONNECTIONS is no more than the admission slots (health probes would be closed at full load), or V2A_CLIENT_SLOTS more (no cap then); a send timeout of a few ms is refused', async () => {
    const lines: Obj[] = [];
    const stream = new Writable({ write(chunk, _enc, done) { for (const l of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(l) as Obj); done(); } });
    const config = loadConfig({ PORT: '0', HOST: '127.0.0.1', V2A_WORKERS: '1', V2A_QUEUE_LIMIT: '4', V2A_MAX_CONNECTIONS: '5', V2A_CLIENT_SLOTS: '100', V2A_WARM_UP: 'false' });
    assert.throws(() => loadConfig({ V2A_SEND_TIMEOUT_MS: '1' }), /V2A_SEND_TIMEOUT_MS must be 0 \(no bound\) or at least 1000/);
    assert.throws(() => loadConfig({ V2A_RECEIVER_CHECK_INTERVAL_MS: '500' }), /V2A_RECEIVER_CHECK_INTERVAL_MS must be 0 \(only on demand\) or at least 1000/);
    // Not a number at all: the whole rule, not "an integer from 0" (1 to 999 are refused too).
    assert.throws(() => loadConfig({ V2A_SEND_TIMEOUT_MS: 'abc' }), /V2A_SEND_TIMEOUT_MS must be 0 \(no bound\) or an integer from 1000 to 3600000/);
    const server = await startServer(config, { handleSignals: false, logger: { level: 'info', stream }, telemetry: await createTelemetry({ key: undefined }) });
    try {
      const warning = lines.find((l) => /^V2A_MAX_CONNECTIONS .* is no more than the admission slots/.test(String(l.msg)));
      assert.deepEqual([warning?.level, warning?.maxConnections, warning?.slots], [40, 5, 5]);
      const slots = lines.find((l) => /^V2A_CLIENT_SLOTS is more than the admission slots/.test(String(l.msg)));
      assert.deepEqual([slots?.level, slots?.clientSlots, slots?.slots], [40, 100, 5]);
    } finally {
      await server.shutdown('test');
    }
  });
});

// ---------------------------------------------------------------------------------------------
// The real container, where an engine runs: build the image, run it, probe it, stop it.

function containerEngine(): string | undefined {
  for (const cli of ['docker', 'podman']) {
    const r = spawnSync(cli, ['info', '--format', '{{.ServerVersion}}'], { encoding: 'utf8', timeout: 15_000 });
    if (!r.error && r.status === 0 && r.stdout.trim()) return cli;
  }
  return undefined;
}

describe('container image', () => {
  const engine = containerEngine();
  test('builds, starts as non-root, answers its probes, exits 0 on docker stop', { skip: engine ? false : 'no container engine answers here (docker/podman info failed): the image is not built or run; the Dockerfile is checked statically above', timeout: 900_000 }, async () => {
    const cli = engine!;
    const tag = `v2a-test:${process.pid}`;
    const build = spawnSync(cli, ['build', '-t', tag, ROOT], { encoding: 'utf8', timeout: 800_000 });
    assert.equal(build.status, 0, build.stderr.slice(-4000));
    const port = await freePort();
    const name = `v2a-test-${process.pid}`;
    const run = spawnSync(cli, ['run', '-d', '--rm', '--name', name, '--read-only', '--tmpfs', '/tmp', '-e', 'V2A_WORKERS=1', '-p', `127.0.0.1:${port}:8080`, tag], { encoding: 'utf8' });
    assert.equal(run.status, 0, run.stderr);
    try {
      const base = `http://127.0.0.1:${port}`;
      let up = false;
      for (let i = 0; i < 100 && !up; i++) {
        try { up = (await fetch(`${base}${READINESS_PATH}`)).status === 200; } catch { await new Promise((r) => setTimeout(r, 300)); }
      }
      assert.ok(up, 'ready');
      assert.equal((await fetch(`${base}${LIVENESS_PATH}`)).status, 200);
      const uid = spawnSync(cli, ['exec', name, 'id', '-u'], { encoding: 'utf8' }).stdout.trim();
      assert.equal(uid, '1000', 'runs as the node user');
      const res = await fetch(`${base}${ENDPOINTS.render.path}?columns=20`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ imageBase64: (await sharpPng()).toString('base64') }) });
      assert.equal(res.status, 200);
      const stop = spawnSync(cli, ['stop', '-t', '40', name], { encoding: 'utf8' });
      assert.equal(stop.status, 0, stop.stderr);
    } finally {
      spawnSync(cli, ['rm', '-f', name]);
      spawnSync(cli, ['rmi', '-f', tag]);
    }
  });
});

async function sharpPng(): Promise<Buffer> {
  const { default: sharp } = await import('sharp');
  return sharp({ create: { width: 32, height: 16, channels: 3, background: '#808080' } }).png().toBuffer();
}

/** Whether .dockerignore's `rules` leave `path` out of the build context (Docker's matching). */
function dockerIgnored(path: string, rules: readonly string[]): boolean {
  let ignored = false;
  for (const rule of rules) {
    const negate = rule.startsWith('!');
    const pattern = (negate ? rule.slice(1) : rule).replace(/^\/+|\/+$/g, '');
    const segment = (p: string) => (p === '**' ? '.*' : p.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '[^/]*').replace(/\?/g, '[^/]'));
    if (new RegExp(`^${pattern.split('/').map(segment).join('/')}(/.*)?$`).test(path)) ignored = !negate;
  }
  return ignored;
}
