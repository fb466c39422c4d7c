/**
 * The service's endpoints (interface.md §4 and §4.6), named once: routes register these paths and
 * the OpenAPI document, the agent manifest, llms.txt and the interoperability document list them.
 */
export interface EndpointInfo {
  readonly method: 'GET' | 'POST';
  readonly path: string;
  readonly summary: string;
  readonly description: string;
  readonly tag: 'health' | 'render' | 'handoff' | 'mcp' | 'discovery' | 'platform';
  readonly operationId: string;
  /** Protected platform action: needs the platform key (PlatformBearer or PlatformHeader). */
  readonly protected?: boolean;
}

export const ENDPOINTS = {
  health: { method: 'GET', path: '/api/health', tag: 'health', operationId: 'getHealth', summary: 'Liveness and capability probe',
    description: 'Service status, version, uptime, worker pool load and capabilities. Accepts W3C trace context and returns it. 503 while shutting down.' },
  healthV1: { method: 'GET', path: '/api/v1/health', tag: 'health', operationId: 'getHealthV1', summary: 'Versioned liveness and capability probe',
    description: 'The same trace-aware envelope as /api/health.' },
  healthLive: { method: 'GET', path: '/api/v1/health/live', tag: 'health', operationId: 'getLiveness', summary: 'Liveness probe (Kubernetes; extension)',
    description: 'Operational extension beyond the contract: 200 `alive` while the process answers (refused once shutdown has closed the listener; the kubelet runs no liveness probes on a terminating pod). No capability list; cheap enough for every probe period.' },
  healthReady: { method: 'GET', path: '/api/v1/health/ready', tag: 'health', operationId: 'getReadiness', summary: 'Readiness probe (Kubernetes; extension)',
    description: 'Operational extension beyond the contract: 200 `ready` once the render workers have warmed up; 503 `warming` before; refused once shutdown has closed the listener (`draining` on a connection still open then). A full queue does not make the server unready (renders answer 503 with Retry-After themselves).' },
  render: { method: 'POST', path: '/api/v1/render', tag: 'render', operationId: 'render', summary: 'Render one image as character art',
    description: 'Exactly one image: a multipart/form-data file field `image`, or a JSON body with `imageUrl` (https, allowlisted host) or `imageBase64`. Render parameters as query string, form fields or JSON keys (each parameter in one carrier only). The reply\'s content type follows `format`.' },
  handoff: { method: 'GET', path: '/api/v1/a2v-handoff', tag: 'handoff', operationId: 'getHandoffManifest', summary: 'Browser-to-receiver handoff manifest',
    description: 'How the browser studio hands its latest ASCII frames to the trusted A2V receiver: fixed target origin, window.postMessage transport, modes, protocol id, launch URL and message types.' },
  mcp: { method: 'POST', path: '/api/mcp', tag: 'mcp', operationId: 'mcp', summary: 'MCP (JSON-RPC 2.0) tool endpoint',
    description: 'Model Context Protocol over stateless Streamable HTTP, JSON replies only: initialize, ping, tools/list, tools/call (tool render_ascii), single messages or batches. Notifications only: 202.' },
  agent: { method: 'GET', path: '/api/v1/agent', tag: 'discovery', operationId: 'getAgentManifest', summary: 'Agent manifest with ready-to-run recipes',
    description: 'Tools (render_ascii, stream_ascii_to_a2v), capabilities, defaults, limits, discovery addresses and curl recipes.' },
  openapi: { method: 'GET', path: '/api/openapi.json', tag: 'discovery', operationId: 'getOpenApi', summary: 'This OpenAPI 3.1.0 document',
    description: 'Machine-readable description of every endpoint, parameter, content type, error shape and security scheme.' },
  llms: { method: 'GET', path: '/llms.txt', tag: 'discovery', operationId: 'getLlmsTxt', summary: 'llms.txt summary for language models',
    description: 'Markdown overview following the llmstxt.org conventions, with links.' },
  llmsFull: { method: 'GET', path: '/llms-full.txt', tag: 'discovery', operationId: 'getLlmsFullTxt', summary: 'llms.txt with the full reference inlined',
    description: 'llms.txt plus the parameter table, formats, errors and examples.' },
  interoperability: { method: 'GET', path: '/api/v1/interoperability', tag: 'discovery', operationId: 'getInteroperability', summary: 'Supported protocols and identifiers',
    description: 'HTTP, MCP protocol versions, OpenAPI, the handoff protocol id, trace context and the compact chroma encoding.' },
  metrics: { method: 'GET', path: '/api/v1/metrics', tag: 'platform', operationId: 'getMetrics', summary: 'Prometheus metrics (V2A_METRICS; platform key when set)', protected: true,
    description: 'Prometheus text exposition 0.0.4: requests by route and status, latency histograms, render time by stage, worker-pool load and queue depth, rejected inputs by cause, MCP tool calls, receiver checks, span exports. Served when V2A_METRICS is on (default: when PLATFORM_API_KEY is set); needs the platform key when one is configured; 404 when off.' },
  status: { method: 'GET', path: '/api/v1/status', tag: 'platform', operationId: 'getStatus', summary: 'Operational status (platform key)', protected: true,
    description: 'Version, uptime, worker-pool state, span export state, the effective non-secret configuration and the result of the latest status check of the handoff receiver. Needs the platform key; 404 when PLATFORM_API_KEY is not configured.' },
} as const satisfies Record<string, EndpointInfo>;

export type EndpointName = keyof typeof ENDPOINTS;
export const ENDPOINT_LIST: readonly EndpointInfo[] = Object.values(ENDPOINTS);
