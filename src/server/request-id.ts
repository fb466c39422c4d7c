/**
 * X-Request-Id, as a proxy in front sets it (Envoy, nginx's $request_id, a load balancer's): kept
 * on the request's log lines and echoed on its reply, so that the proxy's access log and the
 * server's meet on it (the trace id does the same for callers that send traceparent, which many
 * proxies do not). Only one token of at most 128 visible ASCII characters is kept: a header is
 * the client's to write, and a log line is no place for what it could hide in a longer one.
 */
/** One token of at most 128 visible ASCII characters: an X-Request-Id kept, an Mcp-Session-Id of ours (the OpenAPI document states it). */
export const VISIBLE_TOKEN = /^[\x21-\x7e]{1,128}$/;

/** The request's X-Request-Id when it is one such token (sent once); else undefined. */
export function requestIdOf(value: string | string[] | undefined): string | undefined {
  return typeof value === 'string' && VISIBLE_TOKEN.test(value) ? value : undefined;
}
