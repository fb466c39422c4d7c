/**
 * Deployment files, validated offline (no Docker engine, no cluster): the Kubernetes manifests in
 * deploy/k8s (strict YAML, kinds, ports, probes, labels, security, sizing, settings known to
 * config.ts), the Dockerfile and .dockerignore, and the container's lifecycle run for real:
 * the server started as the image starts it, with the ConfigMap's settings, probed on the
 * manifest's probe paths and by the Dockerfile's own HEALTHCHECK command, then stopped by SIGTERM
 * and expected to exit 0.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import net, { type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';
import { describeConfig, jsonBodyLimit, loadConfig } from '../src/server/config.js';
import { HEALTH_PATHS } from '../src/server/routes/health.js';

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
  Ingress: 'networking.k8s.io/v1',
  Kustomization: 'kustomize.config.k8s.io/v1beta1',
};

const yamlFiles = readdirSync(K8S).filter((f) => /\.ya?ml$/.test(f)).sort();
const docsByFile = new Map(yamlFiles.map((f) => [f, parseYamlFile(join(K8S, f))]));
const allDocs = [...docsByFile.values()].flat();

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
const ingress = one('Ingress');
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

  test('ports: container port = Service targetPort = PORT; Service is ClusterIP 80; Ingress targets the Service', () => {
    const port = Number(podSetting('PORT'));
    assert.equal(port, 8080);
    const http = (container.ports as Obj[]).find((p) => p.name === 'http');
    assert.equal(http?.containerPort, port);
    assert.equal(service.spec.type ?? 'ClusterIP', 'ClusterIP');
    assert.equal(service.spec.ports.length, 1);
    assert.equal(service.spec.ports[0].port, 80);
    assert.equal(resolvePort(service.spec.ports[0].targetPort), port);
    for (const rule of ingress.spec.rules) {
      for (const path of rule.http.paths) {
        assert.equal(path.backend.service.name, service.metadata.name);
        const p = path.backend.service.port;
        assert.ok(p.name ? service.spec.ports.some((sp: Obj) => sp.name === p.name) : p.number === 80);
      }
    }
  });

  test('probes: startup, readiness and liveness hit a health path the server serves, on the container port', () => {
    const healthSource = read('src', 'server', 'routes', 'health.ts');
    for (const kind of ['startupProbe', 'readinessProbe', 'livenessProbe']) {
      const probe: Obj = container[kind];
      assert.ok(probe?.httpGet, `${kind} is an httpGet probe`);
      assert.ok((HEALTH_PATHS as readonly string[]).includes(probe.httpGet.path), `${kind} path ${probe.httpGet.path}`);
      assert.ok(['/api/health', '/api/v1/health'].includes(probe.httpGet.path));
      assert.ok(healthSource.includes('HEALTH_PATHS'), 'health.ts registers HEALTH_PATHS');
      assert.equal(resolvePort(probe.httpGet.port), Number(podSetting('PORT')), `${kind} port`);
      assert.ok((probe.timeoutSeconds ?? 1) < (probe.periodSeconds ?? 10) || kind === 'startupProbe', `${kind} timeout below period`);
    }
    const paths = new Set(['readinessProbe', 'livenessProbe'].map((k) => container[k].httpGet.path));
    assert.deepEqual([...paths].sort(), ['/api/health', '/api/v1/health'], 'both health paths are probed');
    const s = container.startupProbe;
    assert.ok(s.periodSeconds * s.failureThreshold >= 20, 'startup allowance of at least 20 s');
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
    // Each running render: the upload (V2A_MAX_IMAGE_BYTES) and a decode of up to
    // V2A_MAX_IMAGE_PIXELS; each queued one holds its JSON body. A floor, not the measurement.
    const cfg = loadConfig({ ...configData });
    const running = cfg.workers * (cfg.maxImageBytes + cfg.maxImagePixels * 4);
    const queued = cfg.queueLimit * jsonBodyLimit(cfg.maxImageBytes);
    assert.ok(quantity(limits.memory) > running + queued, `memory limit ${limits.memory} covers ${Math.round((running + queued) / 2 ** 20)} MiB`);
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
    for (const e of env) {
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
    assert.equal(deployment.spec.replicas, 3);
    assert.equal(deployment.spec.strategy.rollingUpdate.maxUnavailable, 0);
    assert.deepEqual(hpa.spec.scaleTargetRef, { apiVersion: 'apps/v1', kind: 'Deployment', name: deployment.metadata.name });
    assert.equal(hpa.spec.minReplicas, 3);
    assert.equal(hpa.spec.maxReplicas, 20);
    const cpu = (hpa.spec.metrics as Obj[]).find((m) => m.type === 'Resource' && m.resource.name === 'cpu');
    assert.equal(cpu?.resource.target.type, 'Utilization');
    assert.ok(cpu.resource.target.averageUtilization >= 50 && cpu.resource.target.averageUtilization <= 80);
    assert.ok(deployment.spec.replicas >= hpa.spec.minReplicas);
    // Either form, and one that leaves room to drain a node with the minimum replica count.
    const { minAvailable, maxUnavailable } = pdb.spec;
    assert.ok((minAvailable === undefined) !== (maxUnavailable === undefined), 'exactly one of minAvailable / maxUnavailable');
    if (minAvailable !== undefined) assert.ok(minAvailable < hpa.spec.minReplicas);
    else assert.ok(maxUnavailable >= 1);
  });

  test('ingress: body-size limit fits the largest accepted request; timeouts above the service budgets', () => {
    const a: Record<string, string> = ingress.metadata.annotations;
    const m = /^(\d+)([kmg]?)$/i.exec(a['nginx.ingress.kubernetes.io/proxy-body-size'] ?? '');
    assert.ok(m, 'proxy-body-size set');
    const bodyLimit = Number(m[1]) * { '': 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3 }[m[2]!.toLowerCase() as '' | 'k' | 'm' | 'g'];
    const maxBytes = Number(podSetting('V2A_MAX_IMAGE_BYTES'));
    assert.ok(bodyLimit >= jsonBodyLimit(maxBytes), `ingress body limit >= JSON base64 body of ${maxBytes} bytes (${jsonBodyLimit(maxBytes)})`);
    assert.ok(bodyLimit >= maxBytes + 64 * 1024, 'multipart: image + part overhead');
    assert.ok(bodyLimit <= jsonBodyLimit(maxBytes) * 1.25, 'not much larger than the server accepts');
    const read = Number(a['nginx.ingress.kubernetes.io/proxy-read-timeout']);
    const budget = (Number(podSetting('V2A_FETCH_TIMEOUT_MS')) + Number(podSetting('V2A_RENDER_TIMEOUT_MS'))) / 1000;
    assert.ok(read > budget, `proxy-read-timeout ${read}s > fetch + render ${budget}s`);
    assert.ok(Number(a['nginx.ingress.kubernetes.io/proxy-send-timeout']) > 0);
    assert.ok(ingress.spec.ingressClassName);
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
    // What the build copies exists in the repository and is not excluded by .dockerignore.
    const ignored = new Set(read('.dockerignore').split('\n').map((l) => l.trim()).filter((l) => l && !l.startsWith('#')));
    for (const stage of dockerfile.stages) {
      for (const copy of stage.instructions.filter((i) => i.op === 'COPY' && !/--from=/.test(i.args))) {
        const sources = copy.args.split(/\s+/).filter((w) => !w.startsWith('--')).slice(0, -1);
        for (const src of sources) {
          assert.ok(existsSync(join(ROOT, src)), `COPY source ${src} exists`);
          assert.ok(!ignored.has(src) && !ignored.has(src.replace(/\/$/, '')), `COPY source ${src} not in .dockerignore`);
        }
      }
    }
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
    assert.deepEqual(JSON.parse(cmd.args), ['node', 'dist/server/main.js'], 'exec-form CMD runs the server (signals reach node)');
    const start = (JSON.parse(read('package.json')) as { scripts: Record<string, string> }).scripts.start;
    assert.equal(start, 'node dist/server/main.js', 'same as npm start');
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
      LOG_LEVEL: 'warn',
    };
    // No key: nothing is exported and nothing leaves this machine.
    delete env.PLATFORM_API_KEY;
    // The image runs dist/server/main.js; the same module from source (dist may be stale here).
    child = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'src', 'server', 'main.ts')], {
      cwd: ROOT, env, stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
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

    for (const kind of ['startupProbe', 'readinessProbe', 'livenessProbe']) {
      const res = await fetch(`${base}${container[kind].httpGet.path}`);
      assert.equal(res.status, 200, `${kind} ${container[kind].httpGet.path}`);
      const body = (await res.json()) as { status: string };
      assert.equal(body.status, 'ok');
    }

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
