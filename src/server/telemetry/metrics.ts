/**
 * Prometheus metrics of one server, in the text exposition format 0.0.4, by prom-client
 * (https://github.com/siimon/prom-client). Served by GET /api/v1/metrics (platform key).
 *
 * Each ServerMetrics has its own Registry: one process may run many apps (the tests do), and a
 * shared registry would refuse their second registration of each name. The process metrics are
 * prom-client's collectDefaultMetrics, registered once per process into one registry of their own
 * (its observers cannot be removed, and they describe the process, not an app), and exposed after
 * the app's.
 *
 * Label values only ever come from bounded sets (route patterns, methods, status codes, stage
 * names, problem slugs, tool names), never from free request data, so cardinality stays small.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics, prometheusContentType, type LabelValues } from 'prom-client';
import { VERSION } from '../../core/types.js';
import type { PoolStats } from '../render-pool.js';
import { STOP_GRACE_MS } from '../render-task.js';

/** `text/plain; version=0.0.4; charset=utf-8`. */
export const PROMETHEUS_CONTENT_TYPE = prometheusContentType;

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

let processRegistry: Registry | undefined;

/** prom-client's default process metrics, registered on first use and kept for the process's life. */
function processMetrics(): Registry {
  if (!processRegistry) {
    processRegistry = new Registry();
    collectDefaultMetrics({ register: processRegistry });
    emptyLagLeftOut(processRegistry);
  }
  return processRegistry;
}

const LAG_STATS = ['min', 'max', 'mean', 'stddev', 'p50', 'p90', 'p99'].map((s) => `nodejs_eventloop_lag_${s}_seconds`);
/** prom-client's value of an empty event-loop histogram's minimum (2^63 - 1 ns). */
const EMPTY_MIN_SECONDS = 9e9;

/**
 * prom-client resets its event-loop delay histogram at each scrape, and a scrape that finds it
 * empty (two within its 10 ms resolution: two Prometheus servers, or a curl beside one) set
 * min 9223372036.85 s, max 0, mean and stddev NaN, and made-up percentiles. Its statistics are
 * set in the order above, the minimum first: an empty one now leaves all of them without a
 * sample, as before the first measurement.
 */
function emptyLagLeftOut(registry: Registry): void {
  const gauges = LAG_STATS.map((name) => registry.getSingleMetric(name) as Gauge | undefined);
  if (gauges.some((g) => g === undefined)) return;
  let empty = false;
  for (const [i, gauge] of (gauges as Gauge[]).entries()) {
    const set = gauge.set.bind(gauge) as (labels: LabelValues<string>, value: number) => void;
    gauge.set = ((labels: LabelValues<string>, value: number) => {
      if (i === 0) empty = !(value < EMPTY_MIN_SECONDS);
      if (empty) gauge.remove(labels);
      else set(labels, value);
    }) as Gauge['set'];
  }
}

/** The metrics of the v2a server. */
export class ServerMetrics {
  readonly registry = new Registry();
  readonly requests: Counter<'method' | 'route' | 'status'>;
  readonly latency: Histogram<'method' | 'route'>;
  readonly stages: Histogram<'stage'>;
  readonly renders: Counter<'face' | 'outcome'>;
  readonly rejected: Counter<'face' | 'cause'>;
  readonly toolCalls: Counter<'tool' | 'outcome'>;
  readonly receiverChecks: Counter<'result'>;
  readonly spanExports: Counter<'result'>;
  readonly droppedConnections: Counter;
  private readonly process: Registry;

  constructor(sources: MetricsSources) {
    this.process = processMetrics();
    const registers = [this.registry];
    /** A gauge read at scrape time; `undefined` leaves it without a sample (a labelless gauge otherwise reads 0). */
    const gauge = (name: string, help: string, read: () => number | undefined) =>
      new Gauge({
        name, help, registers,
        collect() {
          const v = read();
          if (v === undefined) this.remove();
          else this.set(v);
        },
      });
    /** A counter kept by the pool, read at scrape time (prom-client counters only go up: reset, then add its total). */
    const counted = (name: string, help: string, read: () => number) =>
      new Counter({
        name, help, registers,
        collect() {
          this.reset();
          this.inc(read());
        },
      });

    new Gauge({ name: 'v2a_build_info', help: 'Version of the running v2a server (always 1).', labelNames: ['version'], registers }).set({ version: VERSION }, 1);
    gauge('v2a_uptime_seconds', 'Seconds since the server started.', () => Math.round((performance.now() - sources.startedAt) / 10) / 100);
    this.droppedConnections = new Counter({ name: 'v2a_connections_dropped_total', help: 'Connections closed as they arrived because V2A_MAX_CONNECTIONS were open, each with a request in progress.', registers });
    this.requests = new Counter({ name: 'v2a_http_requests_total', help: 'HTTP requests, by method, route pattern (unmatched for unknown paths, unparsed for requests refused by the HTTP parser) and status code (499: the client closed the connection before the reply).', labelNames: ['method', 'route', 'status'], registers });
    this.latency = new Histogram({ name: 'v2a_http_request_duration_seconds', help: 'Time from receiving a request to finishing its reply, by method and route pattern.', labelNames: ['method', 'route'], buckets: LATENCY_BUCKETS, registers });
    this.stages = new Histogram({ name: 'v2a_render_stage_duration_seconds', help: 'Time spent in each render stage: queue (waiting for a worker), input (upload read, base64 decode or URL fetch), decode, director (resample and Auto Director), render (glyphs and colours), format.', labelNames: ['stage'], buckets: STAGE_BUCKETS, registers });
    this.renders = new Counter({ name: 'v2a_renders_total', help: 'Renders attempted, by face (http or mcp) and outcome (ok, error, timeout, or cancelled: the client went away).', labelNames: ['face', 'outcome'], registers });
    this.rejected = new Counter({ name: 'v2a_rejected_inputs_total', help: 'Render requests refused, by face and cause (the problem type slug: missing-image, invalid-parameters, image-too-large, unsupported-image, image-url-not-allowed, rate-limited, overloaded, ...); for mcp, both a tool call answered isError and a POST /api/mcp refused with an HTTP problem.', labelNames: ['face', 'cause'], registers });
    this.toolCalls = new Counter({ name: 'v2a_mcp_tool_calls_total', help: 'MCP tools/call requests, by tool and outcome (ok, tool_error, rpc_error, or cancelled: by notifications/cancelled, or the client went away).', labelNames: ['tool', 'outcome'], registers });
    gauge('v2a_render_pool_workers', 'Render worker threads.', () => sources.pool().workers);
    gauge('v2a_render_pool_running', 'Renders running in a worker now.', () => sources.pool().running);
    gauge('v2a_render_pool_queue_depth', 'Renders waiting for a free worker now.', () => sources.pool().queued);
    gauge('v2a_render_pool_queue_limit', 'Most renders that may wait (V2A_QUEUE_LIMIT); more are refused with 503.', () => sources.pool().queueLimit);
    gauge('v2a_admission_slots_in_use', 'Render and MCP requests holding a slot now (uploading, waiting or rendering; one per tools/call); at v2a_admission_slots new ones are refused with 503.', () => sources.admission?.().inFlight);
    gauge('v2a_admission_slots', 'Slots for render and MCP requests in flight (V2A_WORKERS + V2A_QUEUE_LIMIT).', () => sources.admission?.().capacity);
    counted('v2a_render_pool_threads_started_total', `Render worker threads started: V2A_WORKERS at start-up, then one for each thread replaced (terminated when a render told to stop by V2A_RENDER_TIMEOUT_MS had not stopped ${STOP_GRACE_MS / 1000} s later, or crashed).`, () => sources.pool().threadsStarted);
    counted('v2a_render_pool_completed_total', 'Renders the pool has finished, successfully or not (a render stopped by V2A_RENDER_TIMEOUT_MS is not: v2a_renders_total counts it as a timeout).', () => sources.pool().completed);
    this.receiverChecks = new Counter({ name: 'v2a_receiver_checks_total', help: 'Status checks of the handoff receiver, by result (ok, http_error, unreachable, refused).', labelNames: ['result'], registers });
    gauge('v2a_receiver_up', 'Whether the last status check of the handoff receiver got a 2xx answer (absent before the first check).', () => {
      const l = sources.receiver?.latest();
      return l && (l.up ? 1 : 0);
    });
    gauge('v2a_receiver_check_latency_seconds', 'Time to the response headers of the last receiver status check.', () => sources.receiver?.latest()?.latencySeconds);
    gauge('v2a_span_export_enabled', 'Whether spans are exported over OTLP (PLATFORM_API_KEY set).', () => (sources.exporting() ? 1 : 0));
    this.spanExports = new Counter({ name: 'v2a_span_exports_total', help: 'OTLP span export batches, by result (ok or failed).', labelNames: ['result'], registers });
  }

  /** Forgets this app's metrics (the app's onClose); the process metrics stay for other apps. */
  close(): void {
    this.registry.clear();
  }

  /** The exposition text: this app's metrics, then the process's. */
  async expose(): Promise<string> {
    // merge refuses a name in both, so an app metric can never shadow a process one.
    return Registry.merge([this.registry, this.process]).metrics();
  }
}
