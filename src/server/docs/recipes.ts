/** Ready-to-run curl recipes, shared by the agent manifest and llms-full.txt. */
import { DEFAULTS } from '../../core/params/definitions.js';
import { ENDPOINTS } from '../../contract/endpoints.js';
import { RENDER_TOOL_NAME } from '../mcp-tool.js';
import { LATEST_PROTOCOL_VERSION } from '../mcp/protocol.js';

export interface Recipe {
  readonly name: string;
  readonly description: string;
  readonly command: string;
}

const q = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

/**
 * A 24 x 16 px grey disc as a PNG (384 characters of base64): the MCP recipe runs as it is on any
 * server, where imageUrl would need the operator's V2A_IMAGE_FETCH_ALLOWLIST (empty by default).
 */
const TINY_PNG_BASE64 =
  'iVBORw0KGgoAAAANSUhEUgAAABgAAAAQCAAAAAApT+BJAAAACXBIWXMAAAPoAAAD6AG1e1JrAAAA0ElEQVQY02MQwQEYEMzd29cvxSJx6uzpo7s3LJ6KLnH+xt1bl47tXDWnF1Xi1I2nb1/cObd/w4IJDSgSZ+++/fPx4cVDmxZNakKW2H361ouPb+5dOLBh4cTGQiSJ7Ucv3Xl47+rJ3Wvm9tXlI0ms333s3MULJ/dvXjq9syobSWLphp37Dx3YvXnFnP6mklRkyxev2rBpw5qlcya1VeaguGrqnAWLFs6d3t9WnZ+M6sHeCZMm9nU2VeanogdJQ1NjXVVJTjKWQCzMz07FGrqoAACURXRrdRWeLAAAAABJRU5ErkJggg==';

export function buildRecipes(baseUrl: string): Recipe[] {
  const render = baseUrl + ENDPOINTS.render.path;
  const mcp = baseUrl + ENDPOINTS.mcp.path;
  const json = (o: unknown) => q(JSON.stringify(o));
  const columns = 100;
  return [
    {
      name: 'render-upload-text',
      description: `Upload a file and get plain text, ${columns} columns (the default is ${DEFAULTS.columns}) in the standard charset; parameters in the query string.`,
      command: `curl -sS -F image=@photo.jpg ${q(`${render}?columns=${columns}&charset=standard`)}`,
    },
    {
      name: 'render-upload-html-color',
      description: 'Colour HTML page, parameters as form fields, saved to a file.',
      command: `curl -sS -F image=@photo.jpg -F format=html -F color=true -o ascii.html ${q(render)}`,
    },
    {
      name: 'render-url-json',
      description: 'Render an https image URL to the json format (lines, codebook, Auto Director report). Only for a host the operator put in V2A_IMAGE_FETCH_ALLOWLIST: the list is empty by default, and then every imageUrl is refused (400); send the image itself as in render-base64-compact.',
      command: `curl -sS -H 'content-type: application/json' -d ${json({ imageUrl: 'https://images.example.com/cat.jpg', format: 'json', columns: 80 })} ${q(render)}`,
    },
    {
      name: 'render-base64-compact',
      description: 'Send the image as base64 in JSON and get json-compact (text plus rgb24-b64-v1 chroma). The body is built on standard input: as one argument, a photo\'s base64 passes the shell\'s 128 KiB limit.',
      command: `{ printf '{"format":"json-compact","imageBase64":"'; base64 < photo.png | tr -d '\\n'; printf '"}'; } | curl -sS -H 'content-type: application/json' --data-binary @- ${q(render)}`,
    },
    {
      name: 'render-edges-ansi',
      description: 'Edge line-art in 24-bit ANSI for a terminal.',
      command: `curl -sS -F image=@photo.jpg -F format=ansi -F color=true -F edges=true ${q(render)}`,
    },
    {
      name: 'mcp-tools-list',
      description: 'List the MCP tools (plain JSON-RPC over HTTP, no session needed).',
      command: `curl -sS -H 'content-type: application/json' -H 'accept: application/json, text/event-stream' -d ${json({ jsonrpc: '2.0', id: 1, method: 'tools/list' })} ${q(mcp)}`,
    },
    {
      name: 'mcp-render',
      description: `Call ${RENDER_TOOL_NAME} over MCP with a small image (a grey disc) as imageBase64; send your own image's base64 the same way.`,
      command: `curl -sS -H 'content-type: application/json' -H ${q(`mcp-protocol-version: ${LATEST_PROTOCOL_VERSION}`)} -d ${json({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: RENDER_TOOL_NAME, arguments: { imageBase64: TINY_PNG_BASE64, columns: 24 } } })} ${q(mcp)}`,
    },
    {
      name: 'render-png',
      description: 'The art as a PNG image (extension): 8x16 px per cell (8 / cellAspect px tall for another cellAspect), drawn from the reference font\'s glyph data.',
      command: `curl -sS -F image=@photo.jpg -F format=png -F color=true -o ascii.png ${q(render)}`,
    },
    {
      name: 'health-traced',
      description: 'Health check continuing your trace; the reply carries traceparent with the same trace id.',
      command: `curl -sS -i -H 'traceparent: 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01' ${q(baseUrl + ENDPOINTS.health.path)}`,
    },
  ];
}
