/**
 * Facts of the stdio MCP face (`v2a mcp`) that its help, the agent manifest and llms.txt all
 * state: defined here once, so that none of them describes the roots differently.
 */

/** What `--root <dir>` is, and which folders imagePath may read without it (server/mcp/roots.ts). */
export const MCP_ROOT_HELP =
  'a folder imagePath may read from (repeatable); ~/ and file: URIs are read as in imagePath; the client\'s MCP roots are allowed too. Default: the working directory, until the client lists roots (never /)';
