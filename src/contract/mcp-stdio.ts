/**
 * Facts of the stdio MCP face (`v2a mcp`) that its help, the agent manifest and llms.txt all
 * state: defined here once, so that none of them describes the roots differently.
 */

/** What `--root <dir>` is, and which folders imagePath may read without it (server/mcp/roots.ts). */
export const MCP_ROOT_HELP =
  'a folder imagePath may read from (repeatable); ~/ and file: URIs are read as in imagePath; the client\'s MCP roots are allowed too. Default: the working directory, until the client lists roots (never /)';

/**
 * The environment `v2a mcp` reads: the image limits (readLimits), the reply budget, and imageUrl's
 * two (loadFetchSettings). Its help names them; server.json and the README list the same.
 */
export const MCP_STDIO_ENV = [
  'V2A_MAX_IMAGE_BYTES', 'V2A_MAX_IMAGE_PIXELS', 'V2A_MAX_DECODED_BYTES', 'V2A_MCP_MAX_CHARS', 'V2A_IMAGE_FETCH_ALLOWLIST', 'V2A_FETCH_TIMEOUT_MS',
] as const;
