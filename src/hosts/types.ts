/**
 * The model every host module speaks: where it is deployed (`Target`: scope, platform, home,
 * project), what the adapter offers (`AdapterParts`), and what a host wants written (`Item`s: an
 * entry in a config file, a block in an instructions file, a whole file), plus what it cannot
 * take. Host modules are pure: paths and shapes in, items out; `src/deploy/` does the writing.
 */
import type { FrontMatterDoc } from "../adapter/content.ts";
import type { JsonObject } from "./edit/json.ts";

export const HOST_IDS = [
  "claude",
  "codex",
  "hermes",
  "pi",
  "opencode",
  "cursor",
  "gemini",
  "vscode",
] as const;
export type HostId = typeof HOST_IDS[number];

export type Scope = "project" | "user";

export interface Target {
  scope: Scope;
  platform: NodeJS.Platform;
  env: Readonly<Record<string, string | undefined>>;
  /** The user's home directory (HOME, or USERPROFILE on Windows). */
  home: string;
  /** The project directory (deploy); undefined for convert. */
  project?: string;
}

/** How a host starts or reaches the adapter. */
export type Launch =
  | { kind: "stdio"; command: string; args: string[] }
  | { kind: "remote"; url: string; tokenVar: string };

/** The variable a relay reads its bearer token from (deploy writes it into hosts; the service defines it). */
export { TOKEN_VAR } from "../service/access.ts";

export interface SkillFiles {
  name: string;
  /** Each file of the skill directory: path inside it (with `/`) and bytes. */
  files: { rel: string; content: Uint8Array }[];
}

export interface AdapterParts {
  name: string;
  dir: string;
  launch: Launch;
  /** The context file's text, when the adapter exports one. */
  context?: string;
  skills: SkillFiles[];
  roles: FrontMatterDoc[];
  /** `exports.tools`. */
  tools: string[];
}

export type ConfigFormat = "json" | "toml" | "yaml";

export type Item =
  | { kind: "entry"; file: string; format: ConfigFormat; path: string[]; value: JsonObject; what: string }
  | { kind: "block"; file: string; id: string; text: string; what: string }
  | { kind: "file"; file: string; content: Uint8Array; what: string };

export interface HostPlan {
  host: HostId;
  items: Item[];
  /** Parts of the adapter this host cannot take here, one line each. */
  unsupported: string[];
  /** Things the user has to do or know (trust, approval), one line each. */
  notes: string[];
  /** How to make a running session pick the change up. */
  reconnect: string;
}

/** Read-only look at the disk for hosts whose plan depends on what is there. */
export interface HostFs {
  exists(path: string): boolean;
  read(path: string): string | undefined;
  /** Do the two paths lead to one file (a link)? Absent: taken as no. */
  same?(a: string, b: string): boolean;
}

export interface HostSpec {
  id: HostId;
  title: string;
  /** The longest tool name the host accepts (`mcp__server__tool`). */
  nameBudget: number;
  /**
   * What shows the host is in use (for `--host all`): in a project, its own files and folders
   * there (relative, `/`-separated); for convert, the user's configuration.
   */
  signs: { project: readonly string[]; user(t: Target): string[] };
  plan(a: AdapterParts, t: Target, fs: HostFs): HostPlan;
  /** What the host reads as a variable in an MCP entry's command, arguments and URL (none: as written). */
  expands?: RegExp;
}
