/**
 * The MCP tool `render_ascii`: the render operation of POST /api/v1/render behind the MCP
 * dispatcher. `inputSchema` is generated from PARAMS plus the two image fields; failures are
 * `isError` results carrying exactly the problem detail the HTTP API answers.
 */
import { PARAMS } from '../core/params/definitions.js';
import { paramJsonSchema } from '../core/params/schema.js';
import type { McpTool, McpToolResult } from './mcp/protocol.js';
import { V2aError } from '../core/errors.js';
import { exactlyOneImage, jsonImageInputs, validateParams, type RenderService } from './render-service.js';
import type { ServerMetrics } from './telemetry/metrics.js';
import { failSpan } from './telemetry/tracing.js';

export const RENDER_TOOL_NAME = 'render_ascii';

export const IMAGE_URL_DESCRIPTION = 'HTTPS URL of the image; the host must be on the server\'s trusted list or in V2A_IMAGE_FETCH_ALLOWLIST.';
export const IMAGE_BASE64_DESCRIPTION = 'The image as base64 (RFC 4648; a data: URL prefix and line breaks are accepted).';

/** JSON Schema of the tool's arguments: exactly one of imageUrl / imageBase64, plus render parameters. */
export function renderToolInputSchema(): Record<string, unknown> {
  return {
    type: 'object',
    properties: {
      imageUrl: { type: 'string', format: 'uri', description: IMAGE_URL_DESCRIPTION },
      imageBase64: { type: 'string', description: IMAGE_BASE64_DESCRIPTION },
      ...Object.fromEntries(PARAMS.map((d) => [d.name, paramJsonSchema(d)])),
    },
    additionalProperties: false,
    description: 'Give exactly one of imageUrl or imageBase64; every other property is an optional render parameter.',
  };
}

export const RENDER_TOOL_DESCRIPTION =
  'Render one image (JPEG, PNG, WebP, GIF, AVIF or TIFF) as character art: text, ansi, html, svg, json or json-compact. ' +
  'Pass the image as imageUrl or imageBase64. The Auto Director tunes the parameters you do not set; the text result is the rendered output, ' +
  'and for the json formats structuredContent holds the parsed document.';

export interface RenderToolOptions {
  /** Counts refused calls by cause (the problem slug). */
  metrics?: ServerMetrics;
}

export function createRenderTool(renderer: RenderService, opts: RenderToolOptions = {}): McpTool {
  return {
    name: RENDER_TOOL_NAME,
    title: 'Render image as ASCII art',
    description: RENDER_TOOL_DESCRIPTION,
    inputSchema: renderToolInputSchema(),
    annotations: { title: 'Render image as ASCII art', readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: true },
    async call(args, ctx): Promise<McpToolResult> {
      try {
        const { imageUrl, imageBase64, ...rest } = args;
        const images = jsonImageInputs({ imageUrl, imageBase64 });
        const params = validateParams([{ name: 'tool arguments', kind: 'json', values: rest }]);
        const image = exactlyOneImage(images);
        const out = await renderer.render(image, params, {
          signal: ctx.signal,
          ...(ctx.traceId ? { traceId: ctx.traceId } : {}),
          ...(ctx.span ? { span: ctx.span } : {}),
          face: 'mcp',
          structured: true,
        });
        return { content: [{ type: 'text', text: typeof out.body === 'string' ? out.body : Buffer.from(out.body).toString('base64') }], ...(out.structured ? { structuredContent: out.structured } : {}) };
      } catch (err) {
        if (err instanceof V2aError && err.info.mcp === 'tool') {
          opts.metrics?.rejected.inc({ face: 'mcp', cause: err.code });
          failSpan(ctx.span, { type: err.code, message: err.detail });
          return { content: [{ type: 'text', text: err.detail }], isError: true };
        }
        throw err;
      }
    },
  };
}
