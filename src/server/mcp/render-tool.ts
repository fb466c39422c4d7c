/**
 * The one MCP tool `render_ascii`, whatever the transport: its descriptor (input schema generated
 * from PARAMS plus the image sources, output schema, annotations) and how a reply becomes an MCP
 * result (text block, image block, structuredContent) or an `isError` result. A face supplies only
 * `run`: read the arguments, render (a server worker, or in process for `v2a mcp`) and build the
 * reply with buildToolReply (reply.ts). Light: no server, no telemetry, no SDK.
 */
import { V2aError } from '../../core/errors.js';
import { PARAMS } from '../../core/params/definitions.js';
import { MAX_COLUMNS, MAX_ROWS, MIN_COLUMNS } from '../../core/pipeline/geometry.js';
import type { JobLimits } from '../../core/job.js';
import { paramJsonSchema } from '../../core/params/schema.js';
import { toolFailure, type McpTool, type McpToolContext, type McpToolResult } from './protocol.js';
import { MCP_MAX_CHARS } from '../../settings/index.js';
import { MCP_IMAGE_MAX_EDGE, RENDER_OUTPUT_SCHEMA, type ToolReply } from './reply.js';

export const RENDER_TOOL_NAME = 'render_ascii';

export const IMAGE_URL_DESCRIPTION = 'HTTPS URL of the image, on a host in the server\'s V2A_IMAGE_FETCH_ALLOWLIST. The list is empty unless the operator fills it, and while it is empty every imageUrl is refused: send imageBase64 instead.';

/**
 * The image sources as the `initialize` instructions name them, for a server whose imageUrl may
 * fetch from `hosts`: an agent told that imageUrl is off sends the bytes at once instead of
 * learning it from a refusal.
 */
function imageSourcesNote(hosts: readonly string[]): string {
  if (hosts.length === 0) return 'imageBase64 (imageUrl is off on this server: no image host is allowed)';
  return `imageUrl (https, on ${hosts.length <= 5 ? hosts.join(', ') : `${hosts.slice(0, 5).join(', ')} or ${hosts.length - 5} more allowed hosts`}) or imageBase64`;
}

/** The image limits in force (V2A_MAX_IMAGE_BYTES, V2A_MAX_IMAGE_PIXELS), as the instructions state them. */
type ImageLimits = Pick<JobLimits, 'maxBytes' | 'maxPixels'>;

/**
 * The limits an agent would otherwise learn from a refusal: the image's bytes and pixels, and the
 * grid's (the tools/list budget leaves no room for them in the tool's description).
 */
function limitsNote({ maxBytes, maxPixels }: ImageLimits): string {
  const mib = maxBytes / 1024 ** 2;
  const bytes = Number.isInteger(mib) ? `${mib} MiB` : `${maxBytes.toLocaleString('en-US')} bytes`;
  return `Images may have up to ${bytes} and ${maxPixels.toLocaleString('en-US')} pixels; the art is ${MIN_COLUMNS} to ${MAX_COLUMNS} columns and at most ${MAX_ROWS} rows (crop an image taller than that).`;
}

/**
 * What `initialize` tells the agent, on either face: the image sources (imagePath on stdio, the
 * hosts imageUrl may fetch from) and what every result holds. `imagePath: 'no roots'`: the stdio
 * face with no root to read from (and a client that lists none), where imagePath could only fail.
 */
export const mcpInstructions = (hosts: readonly string[], opts: { imagePath?: boolean | 'no roots'; limits?: ImageLimits } = {}): string =>
  `v2a renders images as character art. Call ${RENDER_TOOL_NAME} with ` +
  `${opts.imagePath === true ? `imagePath (a local image file inside the allowed roots), ${imageSourcesNote(hosts)},` : imageSourcesNote(hosts)} and optional ` +
  'render parameters (columns, charset, format, color, ...). ' +
  (opts.imagePath === 'no roots' ? 'imagePath is unavailable: this server has no roots to read files from (start v2a mcp with --root <folder>, or from a client that lists MCP roots). ' : '') +
  (opts.limits ? `${limitsNote(opts.limits)} ` : '') +
  'Every result has the art as its first content block (text), the art as a PNG image to look at, ' +
  'and structuredContent: the same art as its text, with a machine summary (dimensions, codebook, Director report and effective parameters).';
export const IMAGE_BASE64_DESCRIPTION = 'The image as base64 (RFC 4648; a data: URL prefix and line breaks are accepted).';
export const IMAGE_PATH_DESCRIPTION =
  'Path of a local image file (absolute, ~/..., a file: URI, or relative to the first root). Only files inside the allowed roots (v2a mcp --root, and the client\'s MCP roots) are read; ' +
  'symlinks are followed only while they stay inside a root.';

export interface RenderToolSchemaOptions {
  /** Offer `imagePath` (the stdio face only). */
  readonly imagePath?: boolean;
  /** The character budget in force, which the description states (0: none). Default V2A_MCP_MAX_CHARS' default. */
  readonly maxChars?: number;
}

/** The image sources a face takes, as its texts name them. */
const sourcesOf = (imagePath: boolean | undefined) => (imagePath ? 'imagePath (a local file inside the allowed roots), imageUrl or imageBase64' : 'imageUrl or imageBase64');

/**
 * The tool's missing-image failure: the HTTP API's names the multipart upload too, which no tool
 * call can send. `imagePath`: the stdio face where roots allow reading a file.
 */
export const missingImageDetail = (imagePath = false): string =>
  `No image was supplied: give exactly one of ${sourcesOf(imagePath)} in the tool arguments.`;

/** What the description says of the character budget in force. */
function budgetNote(maxChars: number): string {
  if (maxChars <= 0) return 'This server sets no character budget: every reply comes whole.';
  // Counted once: a client shows the model either the text block or structuredContent.
  return `A reply over this server's character budget of ${maxChars.toLocaleString('en-US')} (the art counted once, plus the summary) is refused with the columns and formats that fit: ` +
    'ask for fewer columns, or format=text (format=png carries the same text, so it fits no better).';
}

/** JSON Schema of the tool's arguments: exactly one image source, plus render parameters. */
export function renderToolInputSchema(opts: RenderToolSchemaOptions = {}): Record<string, unknown> {
  return {
    type: 'object',
    properties: {
      ...(opts.imagePath ? { imagePath: { type: 'string', minLength: 1, description: IMAGE_PATH_DESCRIPTION } } : {}),
      imageUrl: { type: 'string', format: 'uri', description: IMAGE_URL_DESCRIPTION },
      imageBase64: { type: 'string', description: IMAGE_BASE64_DESCRIPTION },
      ...Object.fromEntries(PARAMS.map((d) => [d.name, paramJsonSchema(d)])),
    },
    additionalProperties: false,
    description: opts.imagePath
      ? 'Give exactly one of imagePath, imageUrl or imageBase64; every other property is an optional render parameter.'
      : 'Give exactly one of imageUrl or imageBase64; every other property is an optional render parameter.',
  };
}

export function renderToolDescription(opts: RenderToolSchemaOptions = {}): string {
  return 'Render one image (JPEG, PNG, WebP, GIF, AVIF or TIFF) as character art: text, ansi, html, svg, json, json-compact or png. ' +
    `Pass the image as ${sourcesOf(opts.imagePath)}. The Auto Director tunes the parameters you do not set. ` +
    'The art is content[0].text, in the requested format (for png: the art as plain text); content[1] is the art as a PNG image ' +
    `(at most ${MCP_IMAGE_MAX_EDGE} px a side, smaller cells when needed) so you can look at it; structuredContent.text is the same art again, ` +
    'beside a machine summary: dimensions, charset, codebook, Director report and effective parameters. ' +
    budgetNote(opts.maxChars ?? MCP_MAX_CHARS.default);
}

/** The description of the HTTP face (no imagePath) at the default budget. */
export const RENDER_TOOL_DESCRIPTION = renderToolDescription();

export interface RenderToolFace extends RenderToolSchemaOptions {
  /** Reads the arguments, renders and builds the reply; throws V2aError for the tool's failures. */
  run(args: Record<string, unknown>, ctx: McpToolContext): Promise<ToolReply>;
  /** Told about each failure answered as `isError` (metrics, span status). */
  onToolError?(err: V2aError, ctx: McpToolContext): void;
}

/** The MCP result of a reply. */
export function toolResult(reply: ToolReply): McpToolResult {
  return {
    content: [{ type: 'text', text: reply.text }, { type: 'image', data: reply.image.data, mimeType: reply.image.mimeType }],
    structuredContent: reply.structured as unknown as Record<string, unknown>,
  };
}

export function createRenderTool(face: RenderToolFace): McpTool {
  const schemaOpts = { imagePath: face.imagePath === true };
  return {
    name: RENDER_TOOL_NAME,
    title: 'Render image as ASCII art',
    description: renderToolDescription({ ...schemaOpts, ...(face.maxChars !== undefined ? { maxChars: face.maxChars } : {}) }),
    inputSchema: renderToolInputSchema(schemaOpts),
    outputSchema: RENDER_OUTPUT_SCHEMA,
    annotations: { title: 'Render image as ASCII art', readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: true },
    async call(args, ctx): Promise<McpToolResult> {
      try {
        return toolResult(await face.run(args, ctx));
      } catch (err) {
        if (err instanceof V2aError && err.info.mcp === 'tool') {
          face.onToolError?.(err, ctx);
          return toolFailure(err.detail);
        }
        throw err;
      }
    },
  };
}
