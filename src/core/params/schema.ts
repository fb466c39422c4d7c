import { PARAMS, type ParamDef } from './definitions.js';

/** JSON Schema (2020-12 vocabulary, as OpenAPI 3.1 uses) of one parameter. */
export function paramJsonSchema(def: ParamDef): Record<string, unknown> {
  const base = { description: def.description, default: def.default };
  switch (def.type) {
    case 'integer': return { type: 'integer', minimum: def.min, maximum: def.max, ...base };
    case 'number': return { type: 'number', minimum: def.min, maximum: def.max, ...base };
    case 'boolean': return { type: 'boolean', ...base };
    case 'enum': return { type: 'string', enum: [...def.values], ...base };
    case 'color': return { type: 'string', pattern: '^#?([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$', ...base };
    // JSON Schema's maxLength counts code points, and a glyph is one (glyphsProblem).
    case 'glyphs': return { type: 'string', maxLength: def.maxGlyphs, ...base };
  }
}

/** Object schema with every render parameter as an optional property. */
export function paramsJsonSchema(): { type: 'object'; properties: Record<string, Record<string, unknown>> } {
  return { type: 'object', properties: Object.fromEntries(PARAMS.map((d) => [d.name, paramJsonSchema(d)])) };
}
