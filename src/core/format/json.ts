import { reportedExplicit, reportedParams, type Charset, type RenderParams } from '../params/definitions.js';
import type { CodebookReport, DirectorReport, RenderResult } from '../types.js';
import { HEX_BYTE } from './color.js';
import { checkGrid, gridLines } from './grid.js';

/**
 * The `json` output (schema: `JSON_OUTPUT_SCHEMA` in jsonSchemas.ts). `colors` is present only
 * with `params.color`: one array per row, one `#rrggbb` (lower case) per cell, aligned with the
 * code points of `lines`.
 */
export interface JsonOutput {
  readonly version: string;
  readonly format: 'json';
  readonly columns: number;
  readonly rows: number;
  readonly charset: Charset;
  /** Cell width / height the row count was computed with (0.5: the 1:2 reference cell). */
  readonly cellAspect: number;
  /** The rows, each exactly `columns` code points, without newlines. */
  readonly lines: string[];
  readonly colors?: string[][];
  /** Extension: the background colours, only when cells carry two colours; null where a cell is clear (the source transparent there). */
  readonly background?: (string | null)[][];
  readonly codebook: CodebookReport;
  readonly director: DirectorReport;
  /**
   * Effective parameters: defaults, the caller's values and the Auto Director's adjustments.
   * Extension parameters appear only when they differ from their defaults.
   */
  readonly params: RenderParams;
  /** Names of the parameters the caller set explicitly. */
  readonly explicit: string[];
  /** Size in pixels of the decoded source image. */
  readonly source: { readonly width: number; readonly height: number };
}

/** Per-cell colours (the ink, or `plane`) as rows of `#rrggbb`. */
export function colorRows(result: Pick<RenderResult, 'columns' | 'rows' | 'colors'>, plane: Uint8Array = result.colors): string[][] {
  const { columns, rows } = result;
  const colors = plane;
  const out = new Array<string[]>(rows);
  let o = 0;
  for (let y = 0; y < rows; y++) {
    const row = new Array<string>(columns);
    for (let x = 0; x < columns; x++, o += 3) {
      row[x] = '#' + HEX_BYTE[colors[o]!]! + HEX_BYTE[colors[o + 1]!]! + HEX_BYTE[colors[o + 2]!]!;
    }
    out[y] = row;
  }
  return out;
}

/** The background plane as colorRows, with null for each clear cell (the source transparent there). */
function backgroundRows(result: RenderResult, plane: Uint8Array): (string | null)[][] {
  const rows: (string | null)[][] = colorRows(result, plane);
  const { clear, columns } = result;
  if (clear) for (let i = 0; i < clear.length; i++) if (clear[i]) rows[(i / columns) | 0]![i % columns] = null;
  return rows;
}

/**
 * The `json` output object. Reports are copied field by field so the output is exactly what
 * the schema documents.
 */
export function buildJsonOutput(result: RenderResult): JsonOutput {
  checkGrid(result);
  const c = result.codebook;
  const d = result.director;
  const adjustments: Record<string, { from: number; to: number }> = {};
  for (const [k, v] of Object.entries(d.adjustments)) adjustments[k] = { from: v.from, to: v.to };
  return {
    version: result.version,
    format: 'json',
    columns: result.columns,
    rows: result.rows,
    charset: result.charset,
    cellAspect: result.cellAspect,
    lines: gridLines(result),
    ...(result.params.color ? { colors: colorRows(result) } : {}),
    ...(result.params.color && result.background ? { background: backgroundRows(result, result.background) } : {}),
    codebook: {
      strategy: c.strategy,
      glyphs: c.glyphs,
      size: c.size,
      rampSize: c.rampSize,
      rmse: c.rmse,
      maxRmse: c.maxRmse,
      bitsPerCell: c.bitsPerCell,
    },
    director: {
      status: d.status,
      rubric: d.rubric,
      score: d.score,
      threshold: d.threshold,
      strength: d.strength,
      metrics: { ...d.metrics },
      source: { ...d.source },
      adjustments,
    },
    params: reportedParams(result.params) as RenderParams,
    explicit: reportedExplicit(result.explicit),
    source: { width: result.source.width, height: result.source.height },
  };
}

/** `json`: `buildJsonOutput` serialised compactly. */
export function formatJson(result: RenderResult): string {
  return JSON.stringify(buildJsonOutput(result));
}
