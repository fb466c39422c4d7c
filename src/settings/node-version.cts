/**
 * The oldest Node.js v2a runs on, as package.json's engines.node says (a test keeps the two
 * equal). Checked first by both entries (the `v2a` bin and `npm start`), which are CommonJS and
 * load this before anything else: on an older Node they would fail later with an internal error
 * (zlib.crc32 missing, require() of an ES module refused) instead of saying what is wrong.
 */
const NODE_MIN = { major: 20, minor: 19 } as const;

/** The one line to print when `version` (process.versions.node) is older than NODE_MIN, else undefined. */
function nodeTooOld(version: string): string | undefined {
  const [major = 0, minor = 0] = version.split('.').map(Number);
  if (major > NODE_MIN.major || (major === NODE_MIN.major && minor >= NODE_MIN.minor)) return undefined;
  return `needs Node.js ${NODE_MIN.major}.${NODE_MIN.minor} or newer; this is Node.js ${version}`;
}

export = { NODE_MIN, nodeTooOld };
