/**
 * `/llms.txt` and `/llms-full.txt` (https://llmstxt.org/): an H1, a blockquote summary, then
 * sections of links. The full version inlines the parameter table, formats, errors, limits and
 * examples. Generated from the same definitions as everything else.
 */
import { MCP_ROOT_HELP } from '../../contract/mcp-stdio.js';
import { CHROMA_ENCODING, FORMAT_INFO } from '../../core/format/info.js';
import { FORMATS, PARAMS, describeDomain } from '../../core/params/definitions.js';
import { VERSION } from '../../core/types.js';
import { describeConfig, type ServerConfig } from '../config.js';
import { HANDOFF_MESSAGES, HANDOFF_MODE_INFO, HANDOFF_MODES, HANDOFF_PROTOCOL } from '../../contract/handoff.js';
import { RENDER_TOOL_NAME } from '../mcp-tool.js';
import { SUPPORTED_PROTOCOL_VERSIONS } from '../mcp/protocol.js';
import { PROBLEM_TYPE_BASE, PROBLEM_TYPES } from '../problem.js';
import { IMAGE_FORMATS, SERVICE_DESCRIPTION } from './agent.js';
import { ENDPOINTS, type EndpointInfo } from '../../contract/endpoints.js';
import { defaultText } from './openapi.js';
import { buildRecipes } from './recipes.js';

const cell = (s: string) => s.replace(/\|/g, '\\|').replace(/\n/g, ' ');

function link(baseUrl: string, e: EndpointInfo): string {
  return `- [${e.summary}](${baseUrl}${e.path}): \`${e.method} ${e.path}\`. ${e.description}`;
}

export function buildLlmsTxt(config: ServerConfig, baseUrl: string): string {
  const E = ENDPOINTS;
  return [
    `# v2a`,
    '',
    `> ${SERVICE_DESCRIPTION} Send one image (${IMAGE_FORMATS.join(', ')}) and get ${FORMATS.join(', ')} back; the Auto Director tunes the parameters you leave out. Rendering needs no credentials. Version ${VERSION}.`,
    '',
    `Send exactly one image: a multipart file field \`image\`, or JSON with \`imageUrl\` (https, allowlisted host) or \`imageBase64\`. ` +
      `Parameters (${PARAMS.length}, e.g. columns, charset, format, color) go in the query string, form fields or JSON keys. ` +
      `Errors are RFC 9457 problem+json naming the parameter at fault. Images up to ${config.maxImageBytes} bytes and ${config.maxImagePixels} pixels.`,
    '',
    '## API',
    '',
    link(baseUrl, E.render),
    link(baseUrl, E.mcp),
    link(baseUrl, E.openapi),
    link(baseUrl, E.agent),
    `- Local stdio MCP server: \`npx -y v2a mcp [--root DIR]...\` serves the same \`${RENDER_TOOL_NAME}\` to agents that start servers as a command (Claude Desktop, Claude Code, Cursor, VS Code), with \`imagePath\` for local files inside the roots.`,
    '',
    '## Docs',
    '',
    link(baseUrl, E.llmsFull),
    link(baseUrl, E.interoperability),
    '',
    '## Optional',
    '',
    link(baseUrl, E.health),
    link(baseUrl, E.healthV1),
    link(baseUrl, E.healthLive),
    link(baseUrl, E.healthReady),
    link(baseUrl, E.handoff),
    link(baseUrl, E.metrics),
    link(baseUrl, E.status),
    '',
  ].join('\n');
}

export function buildLlmsFullTxt(config: ServerConfig, baseUrl: string): string {
  const params = [
    '| Name | Type | Allowed | Default | Meaning |',
    '|---|---|---|---|---|',
    // A default in words (an empty one) is no code span.
    ...PARAMS.map((d) => `| \`${d.name}\` | ${d.type} | ${cell(describeDomain(d))} | ${defaultText(d) === String(d.default) ? `\`${defaultText(d)}\`` : defaultText(d)} | ${cell(d.description)} |`),
  ];
  const formats = [
    '| `format` | Content type | Extension | Label |',
    '|---|---|---|---|',
    ...FORMATS.map((f) => `| ${f} | ${FORMAT_INFO[f].contentType} | ${FORMAT_INFO[f].extension} | ${FORMAT_INFO[f].label} |`),
  ];
  const problems = [
    '| Status | type | Meaning |',
    '|---|---|---|',
    ...Object.entries(PROBLEM_TYPES).map(([slug, p]) => `| ${p.status} | ${PROBLEM_TYPE_BASE}${slug} | ${cell(p.description)} |`),
  ];
  const settings = [
    '| Variable | Default | Meaning |',
    '|---|---|---|',
    ...describeConfig().map((c) => `| \`${c.name}\` | ${cell(c.default)} | ${cell(c.meaning)} |`),
  ];
  const recipes = buildRecipes(baseUrl).flatMap((r) => [`### ${r.name}`, '', r.description, '', '```sh', r.command, '```', '']);
  return [
    buildLlmsTxt(config, baseUrl).trimEnd(),
    '',
    '## Render parameters',
    '',
    ...params,
    '',
    'Booleans are true/false (also 1/0 in the query string and form fields). Out of range, wrong type, unknown name, or the same parameter in two carriers: 400 naming the parameter. Nothing is clamped.',
    '',
    '## Output formats',
    '',
    ...formats,
    '',
    `Replies carry \`Content-Disposition: inline; filename="ascii.<ext>"\` and \`X-Auto-Director: <target_met|best_effort>; rubric=<rubric>; score=<0..1>\`. json-compact is \`{ "v": 1, "columns", "rows", "text", "chroma": { "encoding": "${CHROMA_ENCODING}", "data" } }\`, data being base64 of rows x columns x 3 bytes (row-major RGB).`,
    '',
    '## Errors',
    '',
    'Every error is `application/problem+json` with `type`, `title`, `status`, `detail`, `instance`, `traceId`, and `errors: [{ parameter, message }]` for validation.',
    '',
    ...problems,
    '',
    '## MCP',
    '',
    `\`POST ${ENDPOINTS.mcp.path}\`: JSON-RPC 2.0, stateless, JSON replies (\`Accept: application/json\` is enough). Protocol versions: ${SUPPORTED_PROTOCOL_VERSIONS.join(', ')}. ` +
      `Methods: initialize, ping, tools/list, tools/call; batches of at most ${config.mcpMaxBatch}. The tool \`${RENDER_TOOL_NAME}\` takes \`imageUrl\` or \`imageBase64\` plus the parameters above; ` +
      'its result is the output as a text block (for png: the art as plain text), the art as a PNG image block (at most 1600 px a side; smaller cells when larger) and structuredContent conforming to the listed outputSchema ' +
      '(text: the same art again, for clients that show the model only structuredContent; format, columns, rows, charset, codebook, Director report, effective parameters). ' +
      `A reply over ${config.mcpMaxChars ? `${config.mcpMaxChars} characters (V2A_MCP_MAX_CHARS; the art counted once)` : 'the character budget (V2A_MCP_MAX_CHARS, off here)'} is an isError naming the most columns and the formats that fit; nothing is ever cut. ` +
      'Failures are isError results with the same message as the HTTP API (a missing image names the tool\'s own arguments). A browser Origin other than the server\'s own or one in V2A_CORS_ORIGINS is 403. ' +
      `The same tool runs locally over stdio: \`npx -y v2a mcp --root DIR\` adds \`imagePath\`, a local file read only inside the roots. --root: ${MCP_ROOT_HELP}.`,
    '',
    '## Browser handoff',
    '',
    `Protocol \`${HANDOFF_PROTOCOL}\`: the browser studio posts frames to the receiver (${config.receiverUrl}) by window.postMessage at its fixed origin ${new URL(config.receiverUrl).origin}. ` +
      `Modes: ${HANDOFF_MODES.map((m) => `${m} (${HANDOFF_MODE_INFO[m]})`).join('; ')}. Messages: ${HANDOFF_MESSAGES.map((m) => m.type).join(', ')}. Manifest: ${baseUrl}${ENDPOINTS.handoff.path}.`,
    '',
    '## Platform key, tracing and operations',
    '',
    `Rendering, health, manifests and MCP need no credentials. With \`PLATFORM_API_KEY\` set on the server: \`GET ${ENDPOINTS.metrics.path}\` (Prometheus text) and \`GET ${ENDPOINTS.status.path}\` (version, uptime, pool, span export, effective settings, receiver check) ` +
      'answer callers sending the key as `Authorization: Bearer <key>` or `X-Platform-API-Key: <key>` (compared in constant time; otherwise 401 with `WWW-Authenticate: Bearer realm="v2a"`); without a key they are 404. ' +
      'Metrics have their own switch, `V2A_METRICS` (default: on with the key): `on` without a key serves them to anyone who reaches the server, `off` is 404. ' +
      'Spans are exported over OTLP/HTTP (JSON, standard `OTEL_EXPORTER_OTLP_*` settings, the key in `X-Platform-API-Key`): `v2a.request` (the server span of the `traceparent` reply header), ' +
      'under it `v2a.tool_call` per MCP tools/call and the render stages `v2a.input`, `v2a.queue`, `v2a.decode`, `v2a.director`, `v2a.render`, `v2a.format`, then `v2a.reply`. ' +
      'They carry sizes, formats, columns, charset, the Auto Director verdict, status and error type; redaction removes image data, base64, URL queries and user info, and the key, before export. ' +
      `The server also checks the receiver's status endpoint with the key (V2A_RECEIVER_STATUS_URL) and reports it in ${ENDPOINTS.status.path}.`,
    '',
    '## Server settings',
    '',
    ...settings,
    '',
    '## Examples',
    '',
    ...recipes,
  ].join('\n');
}
