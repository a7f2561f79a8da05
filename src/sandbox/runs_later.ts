/**
 * What git, editors, hook managers and agent hosts run from a project later, unconfined and
 * without asking, so what an entry that may write the workspace must not change: the repository
 * (`.git` whole — its hooks and config, `core.fsmonitor`, aliases, filter drivers, and a
 * `commondir` file that would send git to another config — or `.git` the file of a worktree),
 * each submodule's `.git` file (which git follows too), the hooks directory `core.hooksPath` names;
 * the configs of the hook managers git's hooks hand over to (husky, pre-commit, lefthook);
 * editor tasks and settings; dev container commands; mise's configs; the agent hosts' project
 * settings (Claude Code's hooks), MCP servers, plugins, skills and agents (each host hermit
 * deploys to, and other agents' MCP and hook files); hermit's deploy record. Pure.
 */
import path from "node:path";

export const RUNS_LATER = [
  // git reads hooks and config where `.git/commondir` or a `.git` file says: no part can be left
  // writable without the rest (an entry that commits declares `write:` for it)
  ".git",
  ".husky",
  ".pre-commit-config.yaml",
  "lefthook.yml",
  ".lefthook.yml",
  "lefthook-local.yml",
  ".lefthook-local.yml",
  ".lefthook",
  ".vscode",
  ".idea",
  ".zed",
  ".devcontainer",
  ".devcontainer.json", // its initializeCommand runs on the machine itself
  // mise runs a trusted config's hooks and env scripts on entering the directory (trust is by path)
  "mise.toml",
  ".mise.toml",
  "mise.local.toml",
  ".mise.local.toml",
  ".mise",
  // the hosts hermit deploys to: their project settings, hooks, MCP servers, plugins (OpenCode
  // loads `.opencode/plugins/*.ts` into itself), skills and agents
  ".claude",
  ".mcp.json",
  ".cursor",
  ".gemini",
  ".codex",
  "opencode.json",
  "opencode.jsonc",
  ".opencode",
  ".pi",
  ".hermes",
  ".agents",
  ".github/skills",
  ".github/agents",
  // other agents' project MCP servers, hooks and commands run after edits
  ".devin",
  ".windsurf",
  ".kiro",
  ".roo",
  ".amazonq",
  ".continue",
  ".qwen",
  "crush.json",
  ".crush.json",
  ".aider.conf.yml",
  ".hermit",
];

/** What is known of the workspace's repository and the adapters, for `runsLaterPaths`. */
export interface Repository {
  home: string;
  /** The text of the repository's config (the common one, for a worktree: `repositoryFacts`). */
  gitConfig?: string;
  /** Each submodule's working tree (its `core.worktree`, resolved): its `.git` file is kept. */
  submoduleTrees?: readonly string[];
  /** Directories holding adapters. */
  adapters?: readonly string[];
}

/**
 * The paths in workspace `ws` to keep read-only: RUNS_LATER; the directory `core.hooksPath` names
 * in the repository's config when it lies inside `ws` (relative to `ws`; `~/` is `home`); each
 * submodule's `.git` file inside `ws` (`git status` in the project runs one in every submodule,
 * which reads the config that file leads to); none that holds an adapter.
 */
export function runsLaterPaths(ws: string, repo: Repository): string[] {
  const p = path.posix;
  const out = RUNS_LATER.map((f) => p.join(ws, f));
  const hooks = repo.gitConfig === undefined ? undefined : hooksPathIn(repo.gitConfig);
  const at = hooks && (hooks.startsWith("~/") ? p.join(repo.home, hooks.slice(2)) : p.resolve(ws, hooks));
  // only a directory inside the workspace: elsewhere it is not writable by default, and the
  // workspace itself (or above it) would take the whole workspace's writes away
  if (at && at.startsWith(ws + "/")) out.push(at.replace(/\/+$/, ""));
  for (const tree of repo.submoduleTrees ?? []) {
    const at = p.resolve(ws, tree);
    if (at.startsWith(ws + "/")) out.push(p.join(at, ".git"));
  }
  // one inside another is covered by it (a mount of the outer one carries it); one holding an
  // adapter is left alone (its protected `.serve/` inside a read-only one would take Landlock's
  // narrowing of the whole workspace, and its tools may write beside themselves)
  const inside = (a: string) => out.some((b) => a.startsWith(b + "/"));
  const adapters = repo.adapters ?? [];
  const holdsAdapter = (a: string) => adapters.some((d) => d === a || d.startsWith(a + "/"));
  return [...new Set(out)].filter((a) => !inside(a) && !holdsAdapter(a));
}

/**
 * The submodules' git directories under a repository's `.git/modules` (a name may have slashes;
 * a submodule's own submodules are under its `modules/`), relative to it: each directory that
 * holds a `HEAD`. `list` gives a directory's subdirectories (undefined: none). At most 200,
 * 8 levels down, 2000 directories listed.
 */
export function gitModulesIn(
  list: (dir: string) => string[] | undefined,
  isModule: (dir: string) => boolean,
): string[] {
  const found: string[] = [];
  let listed = 0; // a tree made to be wide (an entry may write .git) is not walked without end
  const walk = (rel: string, depth: number) => {
    if (depth > 8 || found.length >= 200 || ++listed > 2000) return;
    for (const name of list(rel) ?? []) {
      const sub = rel ? `${rel}/${name}` : name;
      if (isModule(sub)) {
        found.push(sub);
        walk(`${sub}/modules`, depth + 1);
      } else walk(sub, depth + 1);
    }
  };
  walk("", 0);
  return found;
}

/** `core.hooksPath` in a git config's text (the last one set), if any. */
export function hooksPathIn(text: string): string | undefined {
  return coreSetting(text, "hookspath");
}

/** `core.worktree` in a git config's text (the last one set), if any: where a submodule's tree is. */
export function worktreeIn(text: string): string | undefined {
  return coreSetting(text, "worktree");
}

/** The last value of `core.<key>` (`key` lower-case) in a git config's text, if any. */
function coreSetting(text: string, key: string): string | undefined {
  let section = "";
  let found: string | undefined;
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trim();
    const head = /^\[\s*([A-Za-z0-9.-]+)(?:\s+"[^"]*")?\s*\]\s*(.*)$/.exec(line);
    const rest = head ? head[2] : line;
    if (head) section = head[1].toLowerCase();
    if (section !== "core") continue;
    const kv = /^([A-Za-z0-9-]+)\s*=\s*(.*)$/.exec(rest);
    if (!kv || kv[1].toLowerCase() !== key) continue;
    let v = kv[2].trim();
    if (v.startsWith('"')) v = v.slice(1, v.indexOf('"', 1) > 0 ? v.indexOf('"', 1) : undefined);
    else v = v.replace(/\s*[#;].*$/, "");
    if (v) found = v;
  }
  return found;
}
