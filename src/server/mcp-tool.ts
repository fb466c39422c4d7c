/**
 * The MCP tool `render_ascii` of the HTTP service: the shared tool (mcp/render-tool.ts) whose
 * renders run in the worker pool like POST /api/v1/render. The worker builds the reply (text,
 * image block, summary, character budget: mcp/reply.ts); failures are `isError` results carrying
 * exactly the problem detail the HTTP API answers. `imagePath` is not offered here: like any
 * unknown argument it is refused.
 */
import { V2aError } from '../core/errors.js';
import type { McpTool } from './mcp/protocol.js';
import { createRenderTool as createTool, missingImageDetail } from './mcp/render-tool.js';
import { CARRIER_IMAGE_FIELDS, exactlyOneImage, jsonImageInputs, validateParams } from './render-inputs.js';
import { MCP_MAX_CHARS } from '../settings/index.js';
import type { RenderService } from './render-service.js';
import type { ServerMetrics } from './telemetry/metrics.js';
import { failSpan } from './telemetry/tracing.js';

export {
  IMAGE_BASE64_DESCRIPTION, IMAGE_URL_DESCRIPTION, RENDER_TOOL_DESCRIPTION, RENDER_TOOL_NAME, renderToolInputSchema,
} from './mcp/render-tool.js';

export interface RenderToolOptions {
  /** Counts refused calls by cause (the problem slug). */
  metrics?: ServerMetrics;
  /** Character budget of one reply (0: none). Default V2A_MCP_MAX_CHARS' default. */
  maxChars?: number;
}

export function createRenderTool(renderer: RenderService, opts: RenderToolOptions = {}): McpTool {
  const maxChars = opts.maxChars ?? MCP_MAX_CHARS.default;
  return createTool({
    maxChars,
    async run(args, ctx) {
      const { imageUrl, imageBase64, ...rest } = args;
      let params: ReturnType<typeof validateParams>;
      let image: ReturnType<typeof exactlyOneImage>;
      try {
        // The stdio face's source (README's two set-ups share one tool name): say where it works.
        if ('imagePath' in rest) {
          throw new V2aError('invalid-parameters', 'imagePath is read only by the local MCP server (v2a mcp), which runs where the files are; this server is reached over HTTP: send the image as imageBase64 (or imageUrl, where the server fetches from its host).', {
            errors: [{ parameter: 'imagePath', message: 'only on the local stdio server (v2a mcp)' }],
          });
        }
        const images = jsonImageInputs({ imageUrl, imageBase64 });
        params = validateParams([{ name: 'tool arguments', kind: 'json', values: rest }]);
        // A tool call cannot upload a file: its detail names the tool's sources only.
        image = exactlyOneImage(images, CARRIER_IMAGE_FIELDS.json, missingImageDetail());
      } catch (err) {
        // Counted as the HTTP face counts a request it refuses before rendering (there, inside renderBody).
        opts.metrics?.renders.inc({ face: 'mcp', outcome: 'error' });
        throw err;
      }
      const out = await renderer.render(image, params, {
        signal: ctx.signal,
        ...(ctx.traceId ? { traceId: ctx.traceId } : {}),
        ...(ctx.span ? { span: ctx.span } : {}),
        face: 'mcp',
        mcp: { maxChars },
      });
      if (!out.mcp) throw new V2aError('internal-error', 'The render failed unexpectedly.', { cause: new Error('the worker sent no MCP reply') });
      return out.mcp;
    },
    onToolError(err, ctx) {
      opts.metrics?.rejected.inc({ face: 'mcp', cause: err.code });
      failSpan(ctx.span, { type: err.code, message: err.detail });
    },
  });
}
