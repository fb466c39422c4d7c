/**
 * Prometheus metrics of one server, written in the text exposition format 0.0.4
 * (https://prometheus.io/docs/instrumenting/exposition_formats/) by hand: counters, gauges and
 * histograms with labels, `# HELP` and `# TYPE` lines, escaped label values, cumulative `le`
 * buckets with `+Inf`, `_sum` and `_count`. Served by GET /api/v1/metrics (platform key).
 *
 * Label values only ever come from bounded sets (route patterns, methods, status codes, stage
 * names, problem slugs, tool names), never from free request data, so cardinality stays small.
 */
import { readdirSync } from 'node:fs';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { VERSION } from '../../core/types.js';
import { openFileLimit } from '../config.js';
import type { PoolStats } from '../render-pool.js';
import { STOP_GRACE_MS } from '../render-task.js';

export const PROMETHEUS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

type Labels = Readonly<Record<string, string>>;

const escapeHelp = (s: string) => s.replace(/\\/g, '\\\\').replace(/\n/g, '\\n');
const escapeLabel = (s: string) => s.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"');

function formatValue(v: number): string {
  if (Number.isNaN(v)) return 'NaN';
  if (v === Infinity) return '+Inf';
  if (v === -Infinity) return '-Inf';
  return String(v);
}

function labelText(names: readonly string[], values: readonly string[], extra?: [string, string]): string {
  const parts = names.map((n, i) => `${n}="${escapeLabel(values[i] ?? '')}"`);
  if (extra) parts.push(`${extra[0]}="${escapeLabel(extra[1])}"`);
  return parts.length ? `{${parts.join(',')}}` : '';
}

interface Metric {
  readonly name: string;
  readonly help: string;
  readonly type: 'counter' | 'gauge' | 'histogram';
  lines(): string[];
}

class Series<T> {
  private readonly map = new Map<string, { values: string[]; data: T }>();
  constructor(private readonly labelNames: readonly string[], private readonly init: () => T) {}
  get(labels: Labels): T {
    const values = this.labelNames.map((n) => labels[n] ?? '');
    const key = values.join('\u0000');
    let entry = this.map.get(key);
    if (!entry) {
      entry = { values, data: this.init() };
      this.map.set(key, entry);
    }
    return entry.data;
  }
  entries(): Array<{ values: string[]; data: T }> {
    return [...this.map.values()];
  }
}

export class Counter implements Metric {
  readonly type = 'counter' as const;
  private readonly series: Series<{ v: number }>;
  constructor(readonly name: string, readonly help: string, readonly labelNames: readonly string[] = []) {
    this.series = new Series(labelNames, () => ({ v: 0 }));
  }
  inc(labels: Labels = {}, by = 1): void {
    this.series.get(labels).v += by;
  }
  value(labels: Labels = {}): number {
    return this.series.get(labels).v;
  }
  lines(): string[] {
    return this.series.entries().map((e) => `${this.name}${labelText(this.labelNames, e.values)} ${formatValue(e.data.v)}`);
  }
}

/** A gauge (or counter) whose samples are read when the metrics are scraped. */
export class Collected implements Metric {
  constructor(
    readonly name: string,
    readonly help: string,
    readonly type: 'gauge' | 'counter',
    private readonly collect: () => ReadonlyArray<[Labels, number]>,
  ) {}
  lines(): string[] {
    return this.collect().map(([labels, v]) => {
      const names = Object.keys(labels);
      return `${this.name}${labelText(names, names.map((n) => labels[n]!))} ${formatValue(v)}`;
    });
  }
}

export class Histogram implements Metric {
  readonly type = 'histogram' as const;
  private readonly series: Series<{ counts: number[]; sum: number; count: number }>;
  constructor(readonly name: string, readonly help: string, readonly labelNames: readonly string[], readonly buckets: readonly number[]) {
    this.series = new Series(labelNames, () => ({ counts: new Array<number>(buckets.length).fill(0), sum: 0, count: 0 }));
  }
  observe(labels: Labels, value: number): void {
    if (!Number.isFinite(value)) return;
    const s = this.series.get(labels);
    s.sum += value;
    s.count++;
    for (let i = 0; i < this.buckets.length; i++) if (value <= this.buckets[i]!) s.counts[i]!++;
  }
  lines(): string[] {
    const out: string[] = [];
    for (const e of this.series.entries()) {
      this.buckets.forEach((b, i) => out.push(`${this.name}_bucket${labelText(this.labelNames, e.values, ['le', formatValue(b)])} ${e.data.counts[i]}`));
      out.push(`${this.name}_bucket${labelText(this.labelNames, e.values, ['le', '+Inf'])} ${e.data.count}`);
      out.push(`${this.name}_sum${labelText(this.labelNames, e.values)} ${formatValue(e.data.sum)}`);
      out.push(`${this.name}_count${labelText(this.labelNames, e.values)} ${e.data.count}`);
    }
    return out;
  }
}

export class Registry {
  private readonly metrics: Metric[] = [];
  add<M extends Metric>(metric: M): M {
    if (this.metrics.some((m) => m.name === metric.name)) throw new Error(`metric ${metric.name} registered twice`);
    this.metrics.push(metric);
    return metric;
  }
  /** The exposition text: HELP and TYPE for every metric, then its samples. */
  expose(): string {
    const out: string[] = [];
    for (const m of this.metrics) {
      out.push(`# HELP ${m.name} ${escapeHelp(m.help)}`, `# TYPE ${m.name} ${m.type}`, ...m.lines());
    }
    return `${out.join('\n')}\n`;
  }
}

/** Seconds; request latency from 1 ms to 120 s (V2A_REQUEST_TIMEOUT_MS's default: a trickling upload may take that long). */
export const LATENCY_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];
/** Render stages are shorter: from 0.5 ms. */
export const STAGE_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

export const RENDER_STAGES = ['queue', 'input', 'decode', 'director', 'render', 'format'] as const;
export type RenderStage = (typeof RENDER_STAGES)[number];

/** Where a render was asked for. */
export type Face = 'http' | 'mcp';

export interface ReceiverGaugeSource {
  /** Latest check: up (1/0) and latency in seconds; undefined before the first. */
  latest(): { up: boolean; latencySeconds: number | undefined } | undefined;
}

export interface MetricsSources {
  pool: () => PoolStats;
  /** Admission slots: in use (uploading, waiting or rendering) and how many there are. */
  admission?: () => { inFlight: number; capacity: number };
  startedAt: number;
  receiver?: ReceiverGaugeSource;
  exporting: () => boolean;
}

/** The metrics of the v2a server. */
export class ServerMetrics {
  readonly registry = new Registry();
  readonly requests: Counter;
  readonly latency: Histogram;
  readonly stages: Histogram;
  readonly renders: Counter;
  readonly rejected: Counter;
  readonly toolCalls: Counter;
  readonly receiverChecks: Counter;
  readonly spanExports: Counter;
  readonly droppedConnections: Counter;
  /** Event loop delay since the last scrape (as prom-client's default metrics measure it); stopped by close(). */
  private readonly loopDelay = monitorEventLoopDelay({ resolution: 10 });

  constructor(sources: MetricsSources) {
    this.loopDelay.enable();
    const r = this.registry;
    r.add(new Collected('v2a_build_info', 'Version of the running v2a server (always 1).', 'gauge', () => [[{ version: VERSION }, 1]]));
    r.add(new Collected('v2a_uptime_seconds', 'Seconds since the server started.', 'gauge', () => [[{}, Math.round((performance.now() - sources.startedAt) / 10) / 100]]));
    this.droppedConnections = r.add(new Counter('v2a_connections_dropped_total', 'Connections closed as they arrived because V2A_MAX_CONNECTIONS were open, each with a request in progress.', []));
    this.requests = r.add(new Counter('v2a_http_requests_total', 'HTTP requests, by method, route pattern (unmatched for unknown paths, unparsed for requests refused by the HTTP parser) and status code (499: the client closed the connection before the reply).', ['method', 'route', 'status']));
    this.latency = r.add(new Histogram('v2a_http_request_duration_seconds', 'Time from receiving a request to finishing its reply, by method and route pattern.', ['method', 'route'], LATENCY_BUCKETS));
    this.stages = r.add(new Histogram('v2a_render_stage_duration_seconds', 'Time spent in each render stage: queue (waiting for a worker), input (upload read, base64 decode or URL fetch), decode, director (resample and Auto Director), render (glyphs and colours), format.', ['stage'], STAGE_BUCKETS));
    this.renders = r.add(new Counter('v2a_renders_total', 'Renders attempted, by face (http or mcp) and outcome (ok, error, timeout, or cancelled: the client went away).', ['face', 'outcome']));
    this.rejected = r.add(new Counter('v2a_rejected_inputs_total', 'Render requests refused, by face and cause (the problem type slug: missing-image, invalid-parameters, image-too-large, unsupported-image, image-url-not-allowed, rate-limited, overloaded, ...); for mcp, both a tool call answered isError and a POST /api/mcp refused with an HTTP problem.', ['face', 'cause']));
    this.toolCalls = r.add(new Counter('v2a_mcp_tool_calls_total', 'MCP tools/call requests, by tool and outcome (ok, tool_error, rpc_error, or cancelled: by notifications/cancelled, or the client went away).', ['tool', 'outcome']));
    const pool = (pick: (s: PoolStats) => number) => (): Array<[Labels, number]> => [[{}, pick(sources.pool())]];
    r.add(new Collected('v2a_render_pool_workers', 'Render worker threads.', 'gauge', pool((s) => s.workers)));
    r.add(new Collected('v2a_render_pool_running', 'Renders running in a worker now.', 'gauge', pool((s) => s.running)));
    r.add(new Collected('v2a_render_pool_queue_depth', 'Renders waiting for a free worker now.', 'gauge', pool((s) => s.queued)));
    r.add(new Collected('v2a_render_pool_queue_limit', 'Most renders that may wait (V2A_QUEUE_LIMIT); more are refused with 503.', 'gauge', pool((s) => s.queueLimit)));
    const admission = (pick: (a: { inFlight: number; capacity: number }) => number) => (): Array<[Labels, number]> =>
      sources.admission ? [[{}, pick(sources.admission())]] : [];
    r.add(new Collected('v2a_admission_slots_in_use', 'Render and MCP requests holding a slot now (uploading, waiting or rendering; one per tools/call); at v2a_admission_slots new ones are refused with 503.', 'gauge', admission((a) => a.inFlight)));
    r.add(new Collected('v2a_admission_slots', 'Slots for render and MCP requests in flight (V2A_WORKERS + V2A_QUEUE_LIMIT).', 'gauge', admission((a) => a.capacity)));
    r.add(new Collected('v2a_render_pool_threads_started_total', `Render worker threads started: V2A_WORKERS at start-up, then one for each thread replaced (terminated when a render told to stop by V2A_RENDER_TIMEOUT_MS had not stopped ${STOP_GRACE_MS / 1000} s later, or crashed).`, 'counter', pool((s) => s.threadsStarted)));
    r.add(new Collected('v2a_render_pool_completed_total', 'Renders the pool has finished, successfully or not (a render stopped by V2A_RENDER_TIMEOUT_MS is not: v2a_renders_total counts it as a timeout).', 'counter', pool((s) => s.completed)));
    this.receiverChecks = r.add(new Counter('v2a_receiver_checks_total', 'Status checks of the handoff receiver, by result (ok, http_error, unreachable, refused).', ['result']));
    r.add(new Collected('v2a_receiver_up', 'Whether the last status check of the handoff receiver got a 2xx answer (absent before the first check).', 'gauge', () => {
      const l = sources.receiver?.latest();
      return l ? [[{}, l.up ? 1 : 0]] : [];
    }));
    r.add(new Collected('v2a_receiver_check_latency_seconds', 'Time to the response headers of the last receiver status check.', 'gauge', () => {
      const l = sources.receiver?.latest();
      return l?.latencySeconds !== undefined ? [[{}, l.latencySeconds]] : [];
    }));
    r.add(new Collected('v2a_span_export_enabled', 'Whether spans are exported over OTLP (PLATFORM_API_KEY set).', 'gauge', () => [[{}, sources.exporting() ? 1 : 0]]));
    this.spanExports = r.add(new Counter('v2a_span_exports_total', 'OTLP span export batches, by result (ok or failed).', ['result']));
    r.add(new Collected('process_resident_memory_bytes', 'Resident memory size in bytes.', 'gauge', () => [[{}, process.memoryUsage.rss()]]));
    r.add(new Collected('process_cpu_seconds_total', 'User and system CPU time spent, in seconds.', 'counter', () => {
      const u = process.cpuUsage();
      return [[{}, (u.user + u.system) / 1e6]];
    }));
    r.add(new Collected('nodejs_heap_used_bytes', 'V8 heap in use, in bytes.', 'gauge', () => [[{}, process.memoryUsage().heapUsed]]));
    // The process metrics of prom-client's collectDefaultMetrics, under its names, written here
    // as the rest are: per app, so the many apps of one test process cannot collide.
    r.add(new Collected('nodejs_heap_size_total_bytes', 'V8 heap allocated, in bytes.', 'gauge', () => [[{}, process.memoryUsage().heapTotal]]));
    r.add(new Collected('nodejs_external_memory_bytes', 'Memory of C++ objects bound to JavaScript objects (Buffers among them), in bytes.', 'gauge', () => [[{}, process.memoryUsage().external]]));
    r.add(new Collected('process_start_time_seconds', 'Start time of the process since the Unix epoch, in seconds.', 'gauge', () => [[{}, PROCESS_START_SECONDS]]));
    r.add(new Collected('process_open_fds', 'Open file descriptors (absent where /proc is not available).', 'gauge', () => {
      const n = openFds();
      return n === undefined ? [] : [[{}, n]];
    }));
    r.add(new Collected('process_max_fds', 'Soft limit of open file descriptors (absent where /proc is not available).', 'gauge', () => {
      const n = openFileLimit();
      return n === undefined ? [] : [[{}, n]];
    }));
    const delay = (pick: (h: ReturnType<typeof monitorEventLoopDelay>) => number) => (): Array<[Labels, number]> =>
      this.loopDelay.count > 0 ? [[{}, pick(this.loopDelay) / 1e9]] : [];
    r.add(new Collected('nodejs_eventloop_lag_min_seconds', 'Least event loop delay since the last scrape, in seconds.', 'gauge', delay((h) => h.min)));
    r.add(new Collected('nodejs_eventloop_lag_mean_seconds', 'Mean event loop delay since the last scrape, in seconds.', 'gauge', delay((h) => h.mean)));
    r.add(new Collected('nodejs_eventloop_lag_max_seconds', 'Greatest event loop delay since the last scrape, in seconds.', 'gauge', delay((h) => h.max)));
    r.add(new Collected('nodejs_eventloop_lag_p99_seconds', '99th percentile of the event loop delay since the last scrape, in seconds.', 'gauge', delay((h) => h.percentile(99))));
  }

  /** Stops measuring the event loop delay (the app's onClose). */
  close(): void {
    this.loopDelay.disable();
  }

  expose(): string {
    const text = this.registry.expose();
    // Each scrape reports the delay since the one before, as prom-client does.
    this.loopDelay.reset();
    return text;
  }
}

/** Process start, as prom-client computes it: now less the uptime, in whole seconds. */
const PROCESS_START_SECONDS = Math.round(Date.now() / 1000 - process.uptime());

function openFds(): number | undefined {
  try {
    // Less the descriptor readdir itself holds open.
    return readdirSync('/proc/self/fd').length - 1;
  } catch {
    return undefined;
  }
}
