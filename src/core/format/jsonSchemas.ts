/**
 * JSON Schemas (draft 2020-12) of the `json` and `json-compact` outputs, for the OpenAPI 3.1
 * document and the MCP tool's output description. The parameter part is generated from PARAMS.
 */
import {
  CHARSETS,
  GLYPH_STRATEGIES,
  PARAMS,
  QUALITY_TARGETS,
  type ParamDef,
} from '../params/definitions.js';
import { deepFreeze } from '../freeze.js';
import { paramJsonSchema } from '../params/schema.js';
import { CHROMA_ENCODING, BACKGROUND_ENCODING, COMPACT_VERSION } from './info.js';

export type JsonSchema = { readonly [key: string]: unknown };

const DIALECT = 'https://json-schema.org/draft/2020-12/schema';
/** Cell colours as written by the `json` format. */
const CELL_COLOR_PATTERN = '^#[0-9a-f]{6}$';


const PARAM_NAMES = PARAMS.map((d) => d.name);

const numberMap = (description: string): JsonSchema => ({
  type: 'object',
  description,
  additionalProperties: { type: 'number' },
});

/** Schema of a result's `codebook` report (json output, MCP structured content). */
export const CODEBOOK_SCHEMA: JsonSchema = {
  type: 'object',
  description: 'The glyph codebook actually used, with its measured quantization error.',
  required: ['strategy', 'glyphs', 'size', 'rampSize', 'rmse', 'maxRmse', 'bitsPerCell'],
  additionalProperties: false,
  properties: {
    strategy: { enum: [...GLYPH_STRATEGIES] },
    glyphs: { type: 'string', description: 'The glyphs of the codebook in ramp order, lightest first: the tone levels. structure\'s directional glyphs (- / | \\) are substituted along contours on top of them and are not listed.' },
    size: { type: 'integer', minimum: 1, description: 'Number of glyphs in the codebook.' },
    rampSize: { type: 'integer', minimum: 1, description: 'Size of the ramp the codebook was chosen from.' },
    rmse: { type: 'number', minimum: 0, maximum: 1, description: 'Measured normalized luminance quantization RMSE.' },
    maxRmse: { type: 'number', minimum: 0, maximum: 1, description: 'The RMSE bound the codebook was chosen under (maxGlyphRmse).' },
    bitsPerCell: { type: 'number', minimum: 0, description: 'Shannon entropy in bits of the output glyph histogram.' },
  },
};

/** Schema of a result's Auto Director report (`director`). */
export const DIRECTOR_SCHEMA: JsonSchema = {
  type: 'object',
  description: 'The Auto Director report: the rubric verdict and the adjustments it applied.',
  required: ['status', 'rubric', 'score', 'threshold', 'strength', 'metrics', 'source', 'adjustments'],
  additionalProperties: false,
  properties: {
    status: { enum: ['target_met', 'best_effort'] },
    rubric: { enum: [...QUALITY_TARGETS] },
    score: { type: 'number', minimum: 0, maximum: 1, description: 'Score of the rendered result against the rubric, higher is better.' },
    threshold: { type: 'number', description: 'Score needed for target_met.' },
    strength: { type: 'number', minimum: 0, maximum: 1, description: 'Strength the tuning was applied with (autoOptimize); 0 = disabled.' },
    metrics: numberMap('Named metrics measured on the rendered grid.'),
    source: numberMap('Source measurements the tuning was based on.'),
    adjustments: {
      type: 'object',
      description: 'Parameters the Director changed, by name.',
      propertyNames: { enum: PARAM_NAMES },
      additionalProperties: {
        type: 'object',
        required: ['from', 'to'],
        additionalProperties: false,
        properties: { from: { type: 'number' }, to: { type: 'number' } },
      },
    },
  },
};

/** Schema of a result's effective parameters (`params`). */
export const PARAMS_SCHEMA: JsonSchema = {
  type: 'object',
  description: 'Effective parameters: defaults, the caller\'s values and the Auto Director\'s adjustments. Extension parameters appear only when they differ from their defaults.',
  required: PARAMS.filter((d) => !(d as ParamDef).extension).map((d) => d.name),
  additionalProperties: false,
  properties: Object.fromEntries(PARAMS.map((d) => [d.name, paramJsonSchema(d) as JsonSchema])),
};

/** Schema of the `json` output. */
export const JSON_OUTPUT_SCHEMA: JsonSchema = {
  $schema: DIALECT,
  title: 'v2a json output',
  type: 'object',
  required: ['version', 'format', 'columns', 'rows', 'charset', 'cellAspect', 'lines', 'codebook', 'director', 'params', 'explicit', 'source'],
  additionalProperties: false,
  properties: {
    version: { type: 'string', description: 'Service version.' },
    format: { const: 'json' },
    columns: { type: 'integer', minimum: 1, description: 'Cells per row.' },
    rows: { type: 'integer', minimum: 1, description: 'Number of rows.' },
    charset: { enum: [...CHARSETS] },
    cellAspect: { type: 'number', exclusiveMinimum: 0, description: 'Cell width / height used for the row count (0.5: the 1:2 reference cell).' },
    lines: {
      type: 'array',
      description: 'The rows, each exactly `columns` code points (Unicode for blocks and dots), no newline.',
      items: { type: 'string' },
    },
    colors: {
      type: 'array',
      description: 'Only when params.color: per row, per cell, the colour as #rrggbb, aligned with the code points of lines.',
      items: { type: 'array', items: { type: 'string', pattern: CELL_COLOR_PATTERN } },
    },
    background: {
      type: 'array',
      description: 'Extension (cellColors): only when cells carry two colours, per row, per cell, the background colour as #rrggbb (colors is then the ink drawn over it), or null where the cell is clear (the source seen through): it shows the viewer\'s own ground, blank or with its glyph in its ink.',
      items: { type: 'array', items: { type: ['string', 'null'], pattern: CELL_COLOR_PATTERN } },
    },
    codebook: CODEBOOK_SCHEMA,
    director: DIRECTOR_SCHEMA,
    params: PARAMS_SCHEMA,
    explicit: {
      type: 'array',
      description: 'Names of the parameters the caller set explicitly (the Director leaves them alone).',
      uniqueItems: true,
      items: { enum: PARAM_NAMES },
    },
    source: {
      type: 'object',
      description: 'Size in pixels of the decoded source image.',
      required: ['width', 'height'],
      additionalProperties: false,
      properties: { width: { type: 'integer', minimum: 1 }, height: { type: 'integer', minimum: 1 } },
    },
  },
};

/** Schema of the `json-compact` output. */
export const JSON_COMPACT_OUTPUT_SCHEMA: JsonSchema = {
  $schema: DIALECT,
  title: 'v2a json-compact output',
  type: 'object',
  required: ['v', 'columns', 'rows', 'text', 'chroma'],
  additionalProperties: false,
  properties: {
    v: { const: COMPACT_VERSION },
    columns: { type: 'integer', minimum: 1 },
    rows: { type: 'integer', minimum: 1 },
    text: {
      type: 'string',
      description: 'The text output: `rows` rows of exactly `columns` code points, each ended by a newline.',
    },
    chroma: {
      type: 'object',
      required: ['encoding', 'data'],
      additionalProperties: false,
      properties: {
        encoding: { const: CHROMA_ENCODING },
        data: {
          type: 'string',
          contentEncoding: 'base64',
          pattern: '^[A-Za-z0-9+/]*$',
          description: 'Base64 (RFC 4648, padded) of rows x columns x 3 bytes: row-major RGB, the colour of each cell; always present. Its length is rows x columns x 4.',
        },
      },
    },
    background: {
      type: 'object',
      description: `Extension (cellColors): present only when cells carry two colours; chroma is then each cell's ink and this its background.`,
      required: ['encoding', 'data'],
      additionalProperties: false,
      properties: {
        encoding: { const: BACKGROUND_ENCODING },
        data: {
          type: 'string',
          contentEncoding: 'base64',
          pattern: '^[A-Za-z0-9+/]*$',
          description: 'Base64 of rows x columns x 3 bytes: row-major RGB, the background colour of each cell (for a clear cell, where the source is seen through, the ground it was composited over: black, or white with invert; json marks such cells null). Its length is rows x columns x 4.',
        },
      },
    },
  },
};

// Exported from the package: frozen, so that no caller's edit changes what the server documents
// and validates against in the same process.
for (const schema of [CODEBOOK_SCHEMA, DIRECTOR_SCHEMA, PARAMS_SCHEMA, JSON_OUTPUT_SCHEMA, JSON_COMPACT_OUTPUT_SCHEMA]) deepFreeze(schema);
