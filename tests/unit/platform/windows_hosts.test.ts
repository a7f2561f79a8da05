/**
 * Host config locations on Windows, as `src/hosts/` computes them for a win32 target (pure, so
 * tested here on any OS): every file `deploy`/`convert` would write is a Windows path under
 * %USERPROFILE%, %APPDATA% or %LOCALAPPDATA% (user scope) or the project (project scope), with
 * backslashes only and spaces kept; the well-known ones are where their hosts read them; the
 * entry a host gets starts hermit.exe by its Windows path.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { HOSTS } from "../../../src/hosts/index.ts";
import { type AdapterParts, HOST_IDS, type HostId, type Target } from "../../../src/hosts/types.ts";

const USERPROFILE = "C:\\Users\\Ada Lovelace";
const APPDATA = "E:\\Profiles\\Ada\\Roaming"; // not under USERPROFILE: each must be used as given
const LOCALAPPDATA = "F:\\Local Data";
const env = { USERPROFILE, APPDATA, LOCALAPPDATA, HOMEDRIVE: "C:", HOMEPATH: "\\Users\\Ada Lovelace" };
const noFiles = { exists: () => false, read: () => undefined };

const parts: AdapterParts = {
  name: "notes",
  dir: "D:\\adapters\\my notes",
  launch: {
    kind: "stdio",
    command: "C:\\Program Files\\hermit\\hermit.exe",
    args: ["serve", "D:\\adapters\\my notes"],
  },
  context: "# notes\n",
  skills: [{
    name: "tidy",
    files: [{ rel: "SKILL.md", content: new TextEncoder().encode("---\nname: tidy\n---\n") }],
  }],
  roles: [],
  tools: ["add_note"],
};

function plan(id: HostId, scope: "user" | "project") {
  const t: Target = {
    scope,
    platform: "win32",
    env,
    home: USERPROFILE,
    project: scope === "project" ? "D:\\work\\my project" : undefined,
  };
  return HOSTS[id].plan(parts, t, noFiles);
}

const under = (file: string, dir: string) => file.toLowerCase().startsWith(dir.toLowerCase() + "\\");

describe("windows: host config locations", () => {
  for (const id of HOST_IDS) {
    it(`${id}: user-scope files are Windows paths under the profile directories`, () => {
      const files = plan(id, "user").items.map((i) => i.file);
      assert.ok(files.length > 0);
      for (const f of files) {
        assert.match(f, /^[A-Z]:\\/, f);
        assert.ok(!f.includes("/"), `backslashes only: ${f}`);
        assert.ok([USERPROFILE, APPDATA, LOCALAPPDATA].some((d) => under(f, d)), `under a profile dir: ${f}`);
      }
    });

    it(`${id}: project-scope files stay in the project`, () => {
      for (const { file } of plan(id, "project").items) {
        assert.ok(under(file, "D:\\work\\my project"), file);
        assert.ok(!file.includes("/"), file);
      }
    });
  }

  it("puts the well-known config files where their hosts read them on Windows", () => {
    const config = (id: HostId) => plan(id, "user").items.find((i) => i.kind === "entry")?.file;
    assert.equal(config("claude"), `${USERPROFILE}\\.claude.json`);
    assert.equal(config("codex"), `${USERPROFILE}\\.codex\\config.toml`);
    assert.equal(config("cursor"), `${USERPROFILE}\\.cursor\\mcp.json`);
    assert.equal(config("gemini"), `${USERPROFILE}\\.gemini\\settings.json`);
    assert.equal(config("vscode"), `${APPDATA}\\Code\\User\\mcp.json`, "%APPDATA%, the roaming profile");
  });

  it("starts hermit.exe by its Windows path, spaces and all", () => {
    for (const id of HOST_IDS) {
      const entry = plan(id, "user").items.find((i) => i.kind === "entry");
      assert.ok(entry && entry.kind === "entry", id);
      assert.ok(
        JSON.stringify(entry.value).includes(
          JSON.stringify(parts.launch.kind === "stdio" && parts.launch.command),
        ),
        `${id}: ${JSON.stringify(entry.value)}`,
      );
    }
  });
});
