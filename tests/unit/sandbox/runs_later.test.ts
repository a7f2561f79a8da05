/**
 * What a host, git or an editor runs from a project later: the fixed list (which must cover every
 * file hermit itself deploys into a project for a host to load), and the hooks directory a
 * repository's `core.hooksPath` names (read from its config text).
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { HOSTS } from "../../../src/hosts/index.ts";
import { type AdapterParts, HOST_IDS, type Target } from "../../../src/hosts/types.ts";
import { gitModulesIn, hooksPathIn, runsLaterPaths, worktreeIn } from "../../../src/sandbox/runs_later.ts";

describe("core.hooksPath in a git config", () => {
  it("is read from [core], in any case, quoted or not, a comment after it dropped; the last wins", () => {
    assert.equal(hooksPathIn("[core]\n\thooksPath = .githooks\n"), ".githooks");
    assert.equal(hooksPathIn('[core]\n\thookspath = ".husky/_"\n'), ".husky/_");
    assert.equal(hooksPathIn("[Core]\nHOOKSPATH=hooks # mine\n"), "hooks");
    assert.equal(hooksPathIn("[core]\nhooksPath = a\n[core]\nhooksPath = b\n"), "b");
    assert.equal(hooksPathIn("[core] hooksPath = inline\n"), "inline");
  });

  it("core.worktree (a submodule's tree) is read the same way", () => {
    assert.equal(
      worktreeIn("[core]\n\trepositoryformatversion = 0\n\tworktree = ../../../lib\n"),
      "../../../lib",
    );
    assert.equal(worktreeIn("[core]\n\thooksPath = x\n"), undefined);
    assert.equal(hooksPathIn("[core]\n\tworktree = ../lib\n"), undefined);
  });

  it("is not taken from another section, and absent is undefined", () => {
    assert.equal(hooksPathIn('[remote "origin"]\n\thooksPath = x\n[user]\nname = a\n'), undefined);
    assert.equal(hooksPathIn("[core]\n\tbare = false\n"), undefined);
    assert.equal(hooksPathIn(""), undefined);
  });
});

describe("the paths kept read-only in a workspace", () => {
  it("the fixed list, and a hooks directory inside the workspace", () => {
    const paths = runsLaterPaths("/p", { home: "/h", gitConfig: "[core]\n\thooksPath = tools/hooks/\n" });
    for (const f of ["/p/.git", "/p/.husky", "/p/.vscode", "/p/.claude", "/p/.mcp.json"]) {
      assert.ok(paths.includes(f), f);
    }
    assert.ok(paths.includes("/p/tools/hooks"), paths.join(" "));
  });

  it("every file hermit deploys into a project for a host to load (MCP servers, skills, agents)", () => {
    const adapter: AdapterParts = {
      name: "notes",
      dir: "/adapters/notes",
      launch: { kind: "stdio", command: "/usr/local/bin/hermit", args: ["serve", "/adapters/notes"] },
      context: "# Notes",
      skills: [{ name: "take-notes", files: [{ rel: "SKILL.md", content: new Uint8Array([1]) }] }],
      roles: [{ file: "/r.md", name: "reviewer", description: "d", fields: {}, body: "", problems: [] }],
      tools: ["add_note"],
    };
    const t: Target = { scope: "project", platform: "linux", env: {}, home: "/h", project: "/p" };
    const kept = runsLaterPaths("/p", { home: "/h" });
    const covered = (f: string) => kept.some((k) => f === k || f.startsWith(k + "/"));
    for (const id of HOST_IDS) {
      const plan = HOSTS[id].plan(adapter, t, { exists: () => false, read: () => undefined });
      // instruction files (CLAUDE.md, AGENTS.md) take a block each: the README says they stay writable
      for (const item of plan.items.filter((i) => i.kind !== "block")) {
        assert.ok(covered(item.file), `${id}: ${item.file} (${item.what}) is not kept read-only`);
      }
    }
  });

  it("a hooks directory inside one already listed is left to it (husky's .husky/_)", () => {
    const paths = runsLaterPaths("/p", { home: "/h", gitConfig: "[core]\n\thooksPath = .husky/_\n" });
    assert.deepEqual(paths, runsLaterPaths("/p", { home: "/h" }));
    assert.ok(paths.includes("/p/.husky"));
  });

  it("none that holds an adapter (kept there, its tools write beside themselves)", () => {
    const paths = runsLaterPaths("/p", { home: "/h", adapters: ["/p/.claude/adapters/notes", "/elsewhere"] });
    assert.ok(!paths.includes("/p/.claude"), paths.join(" "));
    assert.ok(paths.includes("/p/.vscode"));
    assert.ok(!runsLaterPaths("/p", { home: "/h", adapters: ["/p/.hermit"] }).includes("/p/.hermit"));
  });

  it("never the workspace itself or what lies outside it", () => {
    const base = runsLaterPaths("/p", { home: "/h" });
    for (const hooks of [".", "..", "/", "~/hooks", "/etc/hooks", "../p2/hooks"]) {
      assert.deepEqual(
        runsLaterPaths("/p", { home: "/h", gitConfig: `[core]\nhooksPath = ${hooks}\n` }),
        base,
        hooks,
      );
    }
  });
});

describe("a repository's submodules", () => {
  it("each one's .git file in its tree, nested ones included; none outside the workspace or of it", () => {
    const paths = runsLaterPaths("/p", {
      home: "/h",
      submoduleTrees: ["/p/lib", "/p/vendor/x", "/p/lib/deep", "/etc", "/p", "/p2/lib"],
    });
    for (const m of ["lib", "vendor/x", "lib/deep"]) assert.ok(paths.includes(`/p/${m}/.git`), m);
    assert.ok(
      !paths.some((x) => x.startsWith("/etc") || x.startsWith("/p2") || x === "/p/.git/.git"),
      paths.join(" "),
    );
  });

  it("their git directories, hooks and config are in .git, which is kept whole", () => {
    const paths = runsLaterPaths("/p", { home: "/h", submoduleTrees: ["/p/lib"] });
    assert.ok(paths.includes("/p/.git"));
    assert.ok(!paths.some((x) => x.startsWith("/p/.git/")), paths.join(" "));
  });

  it("are found where a directory holds a HEAD, under names with slashes and in a submodule's modules/", () => {
    const tree: Record<string, string[]> = {
      "": ["lib", "vendor"],
      "lib": ["hooks", "modules", "objects"],
      "lib/modules": ["deep"],
      "lib/modules/deep": ["hooks"],
      "vendor": ["x"],
      "vendor/x": ["hooks"],
    };
    const heads = new Set(["lib", "lib/modules/deep", "vendor/x"]);
    assert.deepEqual(gitModulesIn((d) => tree[d], (d) => heads.has(d)), [
      "lib",
      "lib/modules/deep",
      "vendor/x",
    ]);
  });

  it("a tree made wide and deep to stall hermit is listed at most 2000 times", () => {
    let listed = 0;
    const wide = () => (listed++, ["a", "b", "c", "d", "e", "f", "g", "h", "i", "j"]);
    assert.deepEqual(gitModulesIn(wide, () => false), []);
    assert.ok(listed <= 2000, String(listed));
  });
});
