/**
 * Command-line flags of the render parameters, generated from PARAMS (the one definition): the
 * kebab-case name, a value placeholder from the type, help from the description, the domain and
 * the default. Values are validated by `parseParams(values, 'strings')`, the same code and the
 * same messages as the HTTP API; nothing is clamped and commander does no validation of its own.
 */
import { Option, type Command } from 'commander';
import {
  DEFAULTS, PARAMS, PARAM_BY_NAME, describeDomain, kebabName, type ParamDef, type ParamName, type RenderParams,
} from '../core/params/definitions.js';
import { ParamValidationError, parseParams, type ParamError } from '../core/params/validate.js';
import { once, usageError } from './terminal.js';

/** `<n>` for integers, `<x>` for numbers, `<name>` for enums, `<hex>` for colours, `<glyphs>` for a ramp. */
function placeholder(def: ParamDef): string {
  switch (def.type) {
    case 'integer': return '<n>';
    case 'number': return '<x>';
    case 'enum': return '<name>';
    case 'color': return '<hex>';
    case 'glyphs': return '<glyphs>';
    case 'boolean': return '';
  }
}

export function flagOf(def: ParamDef): string {
  return `--${kebabName(def.name)}`;
}

/**
 * Defaults the CLI chooses in place of the parameters' own (the API's): render and play put colour
 * on for a colour terminal, and then write ansi. Every help text that shows a default shows these.
 */
const CLI_DEFAULTS: Partial<Record<ParamName, string>> = {
  color: 'on when standard output is a colour terminal',
  format: `ansi when colour is on, else ${DEFAULTS.format}`,
};

function showDefault(def: ParamDef): string {
  const cli = CLI_DEFAULTS[def.name as ParamName];
  if (cli !== undefined) return cli;
  if (def.type === 'boolean') return def.default ? 'on' : 'off';
  // An empty ramp is none of one's own (`default ` said nothing).
  if (def.type === 'glyphs' && def.default === '') return "none: the charset's ramp";
  return String(def.default);
}

/**
 * A parameter's description for the command line: the API's words for what lies beyond its
 * contract ("Extension (beyond the contract): ..."; "...; extension: png") mean nothing here.
 */
function cliDescription(def: ParamDef): string {
  const text = def.description.replace(/^Extension \(beyond the contract\):\s*/, '').replace(/; extension: /, ', ').replace(PARAM_NAMES_IN_TEXT, (name) => FLAG_OF_NAME.get(name)!);
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/**
 * The API's camel-case parameter names a description mentions (`colorDepth`), as the flags that
 * set them (`--colors`): the command line has no `colorDepth`. One-word names (`charset`) read
 * as words and are left alone.
 */
const FLAG_OF_NAME: ReadonlyMap<string, string> = new Map((PARAMS as readonly ParamDef[]).filter((d) => /[A-Z]/.test(d.name))
  .map((d) => [d.name, d.cliFlag?.split(/,\s*/).at(-1) ?? flagOf(d)]));
const PARAM_NAMES_IN_TEXT = new RegExp(`\\b(?:${[...FLAG_OF_NAME.keys()].join('|')})\\b`, 'g');

/** Domain and default, e.g. `a number from 0.2 to 4, step 0.05; default 1.15`. */
export function domainText(def: ParamDef): string {
  const step = def.type === 'number' ? `, step ${def.step}` : '';
  return `${def.type === 'boolean' ? 'a switch' : describeDomain(def)}${step}; default ${showDefault(def)}`;
}

function groupHeading(def: ParamDef): string {
  return `${def.group[0]!.toUpperCase()}${def.group.slice(1)} parameters:`;
}

/**
 * Adds one option per parameter (booleans as a `--x` / `--no-x` pair), grouped by the
 * parameter's group in help. `notes` appends CLI-specific remarks to a parameter's help (how the
 * CLI chooses a default); it never restates a range or a default.
 */
export function addParamOptions(cmd: Command, notes: Partial<Record<ParamName, string>> = {}): Command {
  for (const def of GENERATED) {
    const flag = flagOf(def);
    const note = notes[def.name as ParamName];
    const help = `${cliDescription(def)} (${domainText(def)}${note ? `; ${note}` : ''})`;
    const heading = groupHeading(def);
    if (def.type === 'boolean') {
      cmd.addOption(new Option(flag, help).helpGroup(heading));
      const negated = `--no-${kebabName(def.name)}`;
      const offByDefault = !def.default && CLI_DEFAULTS[def.name as ParamName] === undefined;
      cmd.addOption(new Option(negated, `turn ${flag} off${offByDefault ? ' (the default)' : ''}`).helpGroup(heading));
    } else {
      cmd.addOption(new Option(`${flag} ${placeholder(def)}`, help).helpGroup(heading).argParser(once(flag)));
    }
  }
  return cmd;
}

/** Kebab names of the boolean parameters' switches. */
const SWITCHES = new Set((PARAMS as readonly ParamDef[]).filter((d) => d.type === 'boolean').map((d) => kebabName(d.name)));

/**
 * `argv` with a boolean parameter's switch given a value (`--color=false`, `--no-edges=0`) written
 * as the switch it means (`--no-color`, `--edges`): text carriers take booleans as true, false, 1
 * or 0 in any case, and scripts pass them so (`--color=$COLOR`). Another value is a usage error.
 * And a short flag that takes a value written with `=` (`-w=40`, as long ones are) as commander
 * reads it, `-w40`: its value was "=40". Nothing after `--` is touched, nor the value of a flag in
 * `valueFlags` (`-o --color=false` names a file, as commander reads it: it was written to one
 * named `--no-color`).
 */
export function switchValues(argv: readonly string[], valueFlags: ReadonlySet<string> = new Set()): string[] {
  const end = argv.indexOf('--');
  return argv.map((arg, i) => {
    const free = (end < 0 || i < end) && !(i > 0 && valueFlags.has(argv[i - 1]!));
    const short = free ? /^(-[a-zA-Z])=(.+)$/s.exec(arg) : null;
    if (short && valueFlags.has(short[1]!)) return short[1]! + short[2]!;
    const m = free ? /^--(no-)?([a-z][a-z-]*)=(.*)$/s.exec(arg) : null;
    if (!m || !SWITCHES.has(m[2]!)) return arg;
    const t = m[3]!.trim().toLowerCase();
    const on = t === 'true' || t === '1' ? true : t === 'false' || t === '0' ? false : undefined;
    if (on === undefined) throw usageError(`--${m[1] ?? ''}${m[2]} must be true, false, 1 or 0 (got ${JSON.stringify(m[3])})`);
    return on !== (m[1] !== undefined) ? `--${m[2]}` : `--no-${m[2]}`;
  });
}

/** The parameters with a generated flag; the others (`cliFlag`) are declared by the command. */
const GENERATED: readonly ParamDef[] = (PARAMS as readonly ParamDef[]).filter((d) => d.cliFlag === undefined);

/** The parameter a flag's attribute names (`edgeStrength`), for shell completion. */
export function paramOfAttribute(attribute: string): ParamDef | undefined {
  return GENERATED.find((d) => attributeOf(d) === attribute);
}

/** commander's attribute name of a flag: `--edge-strength` -> `edgeStrength`. */
function attributeOf(def: ParamDef): string {
  return new Option(flagOf(def)).attributeName();
}

/**
 * The parameters given on the command line, validated like the HTTP API (`strings` carrier).
 * Only what the user set is returned, so the Auto Director can tell explicit values from
 * defaults. Throws ParamValidationError (exit 2) naming every invalid value.
 */
export function collectParams(cmd: Command): Partial<RenderParams> {
  const opts = cmd.opts<Record<string, unknown>>();
  const raw: Record<string, unknown> = {};
  for (const def of GENERATED) {
    const attr = attributeOf(def);
    if (cmd.getOptionValueSource(attr) !== 'cli') continue;
    raw[def.name] = opts[attr];
  }
  const parsed = parseParams(raw, 'strings');
  if (!parsed.ok) throw new ParamValidationError(parsed.errors.map(asFlag));
  return parsed.params;
}

/** A parameter's error as the user typed it: `--mono-color must be ...`, not the API's `monoColor must be ...`. */
function asFlag(error: ParamError): ParamError {
  const def = PARAM_BY_NAME.get(error.parameter);
  const named = def && error.message.startsWith(`${def.name} `);
  return named ? { ...error, message: `${flagOf(def)}${error.message.slice(def.name.length)}` } : error;
}

/** One line per parameter flag, for `v2a --help`: `--columns <n>  an integer from 8 to 400; default 120`. */
export function paramSummary(own: readonly (readonly [flag: string, text: string])[] = []): string {
  const rows = [...GENERATED.map((def) => {
    const flag = def.type === 'boolean' ? `${flagOf(def)}, --no-${kebabName(def.name)}` : `${flagOf(def)} ${placeholder(def)}`;
    return [flag, domainText(def)] as const;
  }), ...own];
  const width = Math.max(...rows.map(([f]) => f.length));
  return rows.map(([f, d]) => `  ${f.padEnd(width)}  ${d}`).join('\n');
}
