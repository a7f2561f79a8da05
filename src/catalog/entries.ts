/**
 * The vetted catalog shipped inside hermit: well-known MCP servers that run from npm, each pinned
 * to one version whose tool list a test in the suite checks against what that version really
 * lists, with the tools it offers (and which of them only read), the trust tier and the include
 * list `hermit add` writes by default, the environment it needs (placeholders, never values) and
 * a sandbox policy that fits it, in the manifest's `sandbox:` shape. Pure data.
 */

/** The manifest's `sandbox:` block (`off`, or what a confined server may also read, write and reach). */
export type SandboxPolicy = "off" | {
  read?: string[];
  deny_read?: string[];
  write?: string[];
  network: "none" | "all" | string[];
  require?: boolean;
};

export interface CatalogEntry {
  /** The catalog name, and the default `mcp_servers` key. */
  name: string;
  summary: string;
  package: string;
  version: string;
  /** Arguments after the package; `{root}` is the directory given with `--root`. */
  args: string[];
  /** Required variables, as `${env:…}` placeholders (`hermit add` never writes a value). */
  env: Record<string, string>;
  /** Variables the server reads when set, for the catalog's description only. */
  optionalEnv?: Record<string, string>;
  trust: "full" | "untrusted";
  /** Every tool the pinned version offers (with hermit's client), in the order it lists them. */
  tools: string[];
  /** The tools that only read (vetted here; a server's own readOnlyHint is never believed). */
  readOnly: string[];
  /** What `hermit add` exports unless `--tools` names others. */
  include: string[];
  sandbox: SandboxPolicy;
  /** Why the policy and the defaults are what they are. */
  notes: string;
}

/** npx keeps the packages it runs (and its logs) in the npm cache: a confined npx must write there. */
const NPM_CACHE = "${userHome}/.npm";

const FS_READ = [
  "read_file",
  "read_text_file",
  "read_media_file",
  "read_multiple_files",
  "list_directory",
  "list_directory_with_sizes",
  "directory_tree",
  "search_files",
  "get_file_info",
  "list_allowed_directories",
];

const EVERYTHING_READ = [
  "echo",
  "get-annotated-message",
  "get-env",
  "get-resource-links",
  "get-resource-reference",
  "get-structured-content",
  "get-sum",
  "get-tiny-image",
  "trigger-long-running-operation",
];

const PLAYWRIGHT_READ = [
  "browser_console_messages",
  "browser_find",
  "browser_network_requests",
  "browser_network_request",
  "browser_take_screenshot",
  "browser_snapshot",
  "browser_wait_for",
];

const MEMORY_TOOLS = [
  "create_entities",
  "create_relations",
  "add_observations",
  "delete_entities",
  "delete_observations",
  "delete_relations",
  "read_graph",
  "search_nodes",
  "open_nodes",
];

const NOTION_READ = [
  "API-get-user",
  "API-get-users",
  "API-get-self",
  "API-post-search",
  "API-get-block-children",
  "API-retrieve-a-block",
  "API-retrieve-a-page",
  "API-retrieve-a-page-property",
  "API-retrieve-a-comment",
  "API-query-data-source",
  "API-retrieve-a-data-source",
  "API-list-data-source-templates",
  "API-retrieve-a-database",
  "API-retrieve-page-markdown",
];

export const CATALOG: readonly CatalogEntry[] = [
  {
    name: "filesystem",
    summary: "Read, search and edit files under one root directory",
    package: "@modelcontextprotocol/server-filesystem",
    version: "2026.8.31",
    args: ["{root}"],
    env: {},
    trust: "untrusted",
    tools: [
      "read_file",
      "read_text_file",
      "read_media_file",
      "read_multiple_files",
      "write_file",
      "edit_file",
      "create_directory",
      "list_directory",
      "list_directory_with_sizes",
      "directory_tree",
      "move_file",
      "search_files",
      "get_file_info",
      "list_allowed_directories",
    ],
    readOnly: FS_READ,
    include: FS_READ,
    sandbox: { read: ["{root}"], write: ["{root}", NPM_CACHE], network: "none" },
    notes:
      "Reads and writes only under the root it is given (default: the workspace), no network. Exports the read-only tools by default; name write_file, edit_file, create_directory or move_file with --tools to let it write (untrusted: each write asks first).",
  },
  {
    name: "memory",
    summary: "A knowledge graph of entities, relations and observations, kept in one JSONL file",
    package: "@modelcontextprotocol/server-memory",
    version: "2026.8.31",
    args: [],
    env: { MEMORY_FILE_PATH: "${workspaceFolder}/.memory.jsonl" },
    trust: "full",
    tools: MEMORY_TOOLS,
    readOnly: ["read_graph", "search_nodes", "open_nodes"],
    include: MEMORY_TOOLS,
    sandbox: { write: ["${workspaceFolder}/.memory.jsonl", NPM_CACHE], network: "none" },
    notes:
      "Touches nothing but its graph file (MEMORY_FILE_PATH, in the workspace), no network: full trust, every tool exported.",
  },
  {
    name: "everything",
    summary: "The MCP reference test server: every protocol feature, for trying a host or hermit itself",
    package: "@modelcontextprotocol/server-everything",
    version: "2026.8.31",
    args: [],
    env: {},
    trust: "untrusted",
    tools: [
      "echo",
      "get-annotated-message",
      "get-env",
      "get-resource-links",
      "get-resource-reference",
      "get-structured-content",
      "get-sum",
      "get-tiny-image",
      "gzip-file-as-resource",
      "toggle-simulated-logging",
      "toggle-subscriber-updates",
      "trigger-long-running-operation",
      "simulate-research-query",
      "trigger-elicitation-request",
      "trigger-sampling-request",
    ],
    readOnly: EVERYTHING_READ,
    include: [
      "echo",
      "get-sum",
      "get-tiny-image",
      "get-structured-content",
      "trigger-long-running-operation",
    ],
    sandbox: { write: [NPM_CACHE], network: "none" },
    notes:
      "A test server: untrusted, no network, writes nothing. The default exports are its harmless demos; get-env shows the server's environment and gzip-file-as-resource fetches URLs, so name them with --tools only when that is what you test.",
  },
  {
    name: "sequential-thinking",
    summary: "A scratchpad tool for step-by-step reasoning with revisions and branches",
    package: "@modelcontextprotocol/server-sequential-thinking",
    version: "2026.8.31",
    args: [],
    env: {},
    optionalEnv: { DISABLE_THOUGHT_LOGGING: "true: do not log thoughts to stderr" },
    trust: "full",
    tools: ["sequentialthinking"],
    readOnly: ["sequentialthinking"],
    include: ["sequentialthinking"],
    sandbox: { write: [NPM_CACHE], network: "none" },
    notes: "Keeps its state in memory: no files, no network, full trust.",
  },
  {
    name: "playwright",
    summary: "Drive a browser: navigate, click, type, read the page's accessibility snapshot",
    package: "@playwright/mcp",
    version: "0.0.83",
    args: ["--isolated", "--output-dir", "${workspaceFolder}/.playwright-mcp"],
    env: {},
    trust: "untrusted",
    tools: [
      "browser_close",
      "browser_resize",
      "browser_console_messages",
      "browser_handle_dialog",
      "browser_emulate_media",
      "browser_evaluate",
      "browser_file_upload",
      "browser_drop",
      "browser_find",
      "browser_fill_form",
      "browser_press_key",
      "browser_type",
      "browser_navigate",
      "browser_navigate_back",
      "browser_network_requests",
      "browser_network_request",
      "browser_run_code_unsafe",
      "browser_take_screenshot",
      "browser_snapshot",
      "browser_click",
      "browser_drag",
      "browser_hover",
      "browser_select_option",
      "browser_tabs",
      "browser_wait_for",
    ],
    readOnly: PLAYWRIGHT_READ,
    include: [
      "browser_navigate",
      "browser_navigate_back",
      "browser_snapshot",
      "browser_click",
      "browser_type",
      "browser_press_key",
      "browser_fill_form",
      "browser_select_option",
      "browser_hover",
      "browser_wait_for",
      "browser_tabs",
      "browser_take_screenshot",
      "browser_console_messages",
      "browser_network_requests",
      "browser_close",
    ],
    sandbox: {
      read: ["${userHome}/.cache/ms-playwright"],
      write: ["${workspaceFolder}/.playwright-mcp", NPM_CACHE],
      network: "all",
    },
    notes:
      "Browsing needs the network: network all, writes only its output directory (an isolated in-memory profile, --isolated), reads the installed browsers. Untrusted: page actions ask first. Left out by default: browser_evaluate, browser_run_code_unsafe (run arbitrary code in the page) and browser_file_upload. Needs a browser: npx playwright install chromium.",
  },
  {
    name: "context7",
    summary: "Up-to-date library documentation and code examples, looked up by library name",
    package: "@upstash/context7-mcp",
    version: "4.1.1",
    args: [],
    env: {},
    optionalEnv: { CONTEXT7_API_KEY: "an API key for higher rate limits" },
    trust: "untrusted",
    tools: ["resolve-library-id", "query-docs"],
    readOnly: ["resolve-library-id", "query-docs"],
    include: ["resolve-library-id", "query-docs"],
    sandbox: { write: [NPM_CACHE], network: ["context7.com:443"] },
    notes:
      "Only reads, from context7.com (the only host it may reach); untrusted because its answers are third-party text, but its tools are read-only, so nothing asks.",
  },
  {
    name: "notion",
    summary: "Notion's official server: search, read and edit pages, blocks, comments and databases",
    package: "@notionhq/notion-mcp-server",
    version: "2.5.2",
    args: [],
    env: { NOTION_TOKEN: "${env:NOTION_TOKEN}" },
    trust: "untrusted",
    tools: [
      "API-get-user",
      "API-get-users",
      "API-get-self",
      "API-post-search",
      "API-get-block-children",
      "API-patch-block-children",
      "API-retrieve-a-block",
      "API-update-a-block",
      "API-delete-a-block",
      "API-retrieve-a-page",
      "API-patch-page",
      "API-post-page",
      "API-retrieve-a-page-property",
      "API-retrieve-a-comment",
      "API-create-a-comment",
      "API-query-data-source",
      "API-retrieve-a-data-source",
      "API-update-a-data-source",
      "API-create-a-data-source",
      "API-list-data-source-templates",
      "API-retrieve-a-database",
      "API-move-page",
      "API-retrieve-page-markdown",
      "API-update-page-markdown",
    ],
    readOnly: NOTION_READ,
    include: NOTION_READ,
    sandbox: { write: [NPM_CACHE], network: ["api.notion.com:443"] },
    notes:
      "Reaches api.notion.com only, with the integration token from NOTION_TOKEN in your environment. Exports the reading tools by default (API-post-search and API-query-data-source are POST requests that only read, vetted read-only here although the server hints otherwise); name the editing ones with --tools (untrusted: each edit asks first).",
  },
];

export function catalogEntry(name: string): CatalogEntry | undefined {
  return CATALOG.find((e) => e.name === name);
}
