/**
 * Host plans without touching the disk: the `--serve-url` form in each host's own shape (the
 * token only ever as a variable reference in that host's syntax), the stdio command, and where
 * each host's user files are on Windows, macOS and Linux (with CODEX_HOME, HERMES_HOME,
 * PI_CODING_AGENT_DIR, XDG_CONFIG_HOME, CLAUDE_CONFIG_DIR honoured).
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { remoteLaunch } from "../../../src/deploy/adapter.ts";
import { HermitError } from "../../../src/errors.ts";
import { HOSTS, parseHosts } from "../../../src/hosts/index.ts";
import { homeOf } from "../../../src/hosts/paths.ts";
import {
  type AdapterParts,
  HOST_IDS,
  type HostFs,
  type HostId,
  type Item,
  type Target,
} from "../../../src/hosts/types.ts";

const noFs: HostFs = { exists: () => false, read: () => undefined };

function parts(launch: AdapterParts["launch"]): AdapterParts {
  return {
    name: "notes",
    dir: "/adapters/notes",
    launch,
    context: "# Notes",
    skills: [{ name: "take-notes", files: [{ rel: "SKILL.md", content: new Uint8Array([1]) }] }],
    roles: [],
    tools: ["add_note"],
  };
}

function mcpEntry(
  host: HostId,
  t: Target,
  launch: AdapterParts["launch"],
): Extract<Item, { kind: "entry" }> | undefined {
  return HOSTS[host].plan(parts(launch), t, noFs).items.find((i): i is Extract<Item, { kind: "entry" }> =>
    i.kind === "entry"
  );
}

const linux = (scope: "project" | "user", env: Record<string, string> = {}): Target => ({
  scope,
  platform: "linux",
  env,
  home: "/home/ada",
  project: scope === "project" ? "/work/app" : undefined,
});

describe("--serve-url: each host's remote form, the token as a variable reference only", () => {
  const launch = remoteLaunch("http://127.0.0.1:8765/mcp");
  const expected: Record<HostId, unknown> = {
    claude: {
      type: "http",
      url: "http://127.0.0.1:8765/mcp",
      headers: { Authorization: "Bearer ${HERMIT_SERVE_TOKEN}" },
    },
    codex: {
      url: "http://127.0.0.1:8765/mcp",
      bearer_token_env_var: "HERMIT_SERVE_TOKEN",
      startup_timeout_sec: 30,
    },
    hermes: { url: "http://127.0.0.1:8765/mcp", headers: { Authorization: "Bearer ${HERMIT_SERVE_TOKEN}" } },
    pi: { url: "http://127.0.0.1:8765/mcp", headers: { Authorization: "Bearer ${HERMIT_SERVE_TOKEN}" } },
    opencode: {
      type: "remote",
      url: "http://127.0.0.1:8765/mcp",
      headers: { Authorization: "Bearer {env:HERMIT_SERVE_TOKEN}" },
      enabled: true,
    },
    cursor: {
      url: "http://127.0.0.1:8765/mcp",
      headers: { Authorization: "Bearer ${env:HERMIT_SERVE_TOKEN}" },
    },
    gemini: {
      type: "http",
      url: "http://127.0.0.1:8765/mcp",
      headers: { Authorization: "Bearer ${HERMIT_SERVE_TOKEN}" },
    },
    vscode: {
      type: "http",
      url: "http://127.0.0.1:8765/mcp",
      headers: { Authorization: "Bearer ${env:HERMIT_SERVE_TOKEN}" },
    },
  };
  for (const host of HOST_IDS) {
    it(host, () => {
      const e = mcpEntry(host, linux("user"), launch);
      assert.deepEqual(e?.value, expected[host]);
    });
  }

  it("refuses a URL that is not http(s) or carries credentials", () => {
    for (const bad of ["ftp://x/mcp", "not a url", "http://user:secret@127.0.0.1/mcp"]) {
      assert.throws(() => remoteLaunch(bad), (e: unknown) => e instanceof HermitError && e.exitCode === 2);
    }
  });
});

describe("stdio: the command and the adapter's absolute path as an argument", () => {
  for (const host of HOST_IDS) {
    it(host, () => {
      const e = mcpEntry(host, linux("user"), {
        kind: "stdio",
        command: "/opt/hermit",
        args: ["serve", "/adapters/notes"],
      });
      const flat = JSON.stringify(e?.value);
      assert.match(flat, /\/opt\/hermit/);
      assert.match(flat, /"serve","\/adapters\/notes"/);
      assert.doesNotMatch(flat, /cwd/, "no host may depend on cwd (Claude Code ignores it)");
    });
  }
});

describe("user-scope files per platform", () => {
  const stdio = { kind: "stdio" as const, command: "hermit", args: ["serve", "x"] };
  const win: Target = {
    scope: "user",
    platform: "win32",
    home: homeOf("win32", { USERPROFILE: "C:\\Users\\ada" }, "C:\\fallback"),
    env: {
      USERPROFILE: "C:\\Users\\ada",
      APPDATA: "C:\\Users\\ada\\AppData\\Roaming",
      LOCALAPPDATA: "C:\\Users\\ada\\AppData\\Local",
    },
  };
  const windows: Record<HostId, string> = {
    claude: "C:\\Users\\ada\\.claude.json",
    codex: "C:\\Users\\ada\\.codex\\config.toml",
    hermes: "C:\\Users\\ada\\AppData\\Local\\hermes\\config.yaml",
    pi: "C:\\Users\\ada\\.pi\\agent\\mcp.json",
    opencode: "C:\\Users\\ada\\.config\\opencode\\opencode.json",
    cursor: "C:\\Users\\ada\\.cursor\\mcp.json",
    gemini: "C:\\Users\\ada\\.gemini\\settings.json",
    vscode: "C:\\Users\\ada\\AppData\\Roaming\\Code\\User\\mcp.json",
  };
  for (const host of HOST_IDS) {
    it(`${host} on Windows`, () => assert.equal(mcpEntry(host, win, stdio)?.file, windows[host]));
  }

  it("Windows: skills and roles go under %USERPROFILE% too", () => {
    const plan = HOSTS.claude.plan(parts(stdio), win, noFs);
    assert.ok(plan.items.some((i) => i.file === "C:\\Users\\ada\\.claude\\skills\\take-notes\\SKILL.md"));
    assert.equal(homeOf("win32", { HOMEDRIVE: "D:", HOMEPATH: "\\Users\\bo" }, "x"), "D:\\Users\\bo");
  });

  it("macOS: VS Code's profile lives under Library/Application Support", () => {
    const mac: Target = { scope: "user", platform: "darwin", env: {}, home: "/Users/ada" };
    assert.equal(
      mcpEntry("vscode", mac, stdio)?.file,
      "/Users/ada/Library/Application Support/Code/User/mcp.json",
    );
  });

  it("Linux: the variables that move each host's home", () => {
    const t = linux("user", {
      CODEX_HOME: "/cx",
      HERMES_HOME: "/hh",
      PI_CODING_AGENT_DIR: "/pi",
      XDG_CONFIG_HOME: "/xdg",
      CLAUDE_CONFIG_DIR: "/cc",
    });
    assert.equal(mcpEntry("codex", t, stdio)?.file, "/cx/config.toml");
    assert.equal(mcpEntry("hermes", t, stdio)?.file, "/hh/config.yaml");
    assert.equal(mcpEntry("pi", t, stdio)?.file, "/pi/mcp.json");
    assert.equal(mcpEntry("opencode", t, stdio)?.file, "/xdg/opencode/opencode.json");
    assert.equal(mcpEntry("vscode", t, stdio)?.file, "/xdg/Code/User/mcp.json");
    assert.equal(mcpEntry("claude", t, stdio)?.file, "/cc/.claude.json");
    assert.equal(mcpEntry("claude", linux("user"), stdio)?.file, "/home/ada/.claude.json");
  });
});

describe("--host parsing", () => {
  it("takes several, comma lists, aliases and all", () => {
    assert.deepEqual(parseHosts(["claude,codex", "codex", "Gemini"]), ["claude", "codex", "gemini"]);
    assert.equal(parseHosts(["claude", "all"]), "all");
    assert.deepEqual(parseHosts(["claude-code", "copilot"]), ["claude", "vscode"]);
  });

  it("an unknown name is a usage error with a suggestion", () => {
    assert.throws(
      () => parseHosts(["codx"]),
      (e: unknown) => e instanceof HermitError && e.exitCode === 2 && /did you mean codex/.test(e.message),
    );
    assert.throws(() => parseHosts(["./project"]), /PROJECT directory goes before --host/);
  });

  it("hosts that cannot take a part say so", () => {
    const withRole = {
      ...parts({ kind: "stdio", command: "h", args: [] }),
      roles: [{ file: "/r.md", name: "r", description: "d", fields: {}, body: "", problems: [] }],
    };
    assert.match(
      HOSTS.pi.plan(withRole, linux("project"), noFs).unsupported.join("\n"),
      /roles \(r\): Pi has no subagents/,
    );
    assert.match(
      HOSTS.hermes.plan(withRole, linux("project"), noFs).unsupported.join("\n"),
      /MCP server: Hermes reads MCP servers only from/,
    );
    assert.match(
      HOSTS.cursor.plan(withRole, linux("user"), noFs).unsupported.join("\n"),
      /context: Cursor keeps user rules/,
    );
  });

  it("Gemini CLI: the report says it needs a trusted folder, for the user's config too", () => {
    const p = parts({ kind: "stdio", command: "h", args: [] });
    assert.match(
      HOSTS.gemini.plan(p, linux("project"), noFs).notes.join("\n"),
      /reads \.gemini\/settings\.json only in a trusted folder/,
    );
    // Gemini CLI 0.61 starts no MCP server in an untrusted folder, user-level ones included
    assert.match(
      HOSTS.gemini.plan(p, linux("user"), noFs).notes.join("\n"),
      /starts MCP servers, the user's too, only in a trusted folder/,
    );
  });
});

describe("Gemini CLI's context.fileName", () => {
  const contextFile = (fileName: unknown) => {
    const settings = JSON.stringify({ context: { fileName } });
    const fs: HostFs = {
      exists: () => true,
      read: (p) => p.endsWith("settings.json") ? settings : undefined,
    };
    return HOSTS.gemini.plan(parts({ kind: "stdio", command: "/h", args: [] }), linux("project"), fs).items
      .find((i) => i.kind === "block")?.file;
  };

  it("a name in the project is taken; '.', '..' and paths are not names: GEMINI.md, or the next one", () => {
    assert.equal(contextFile("TEAM.md"), "/work/app/TEAM.md");
    assert.equal(contextFile(["..", "TEAM.md"]), "/work/app/TEAM.md");
    // these wrote into the project's parent ("leads outside the project; replace the link") or
    // read the project folder as the file ("cannot read /work/app (EISDIR)")
    for (const odd of ["..", ".", "../x.md", "/etc/x.md", ["."]]) {
      assert.equal(contextFile(odd), "/work/app/GEMINI.md", JSON.stringify(odd));
    }
  });
});
