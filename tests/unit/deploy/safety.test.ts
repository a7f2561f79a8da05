/**
 * deploy and convert when things go wrong or the adapter reaches out: a write failing part-way
 * leaves every file as it was (and the next run works), `--remove` keeps backups of what it
 * changed, an unreadable or broken record is a clear error, `--dry-run` writes nothing at all,
 * links out of the adapter and a missing skills folder are refused, and the host entry always
 * names the adapter directory absolutely whatever `serve.command` says.
 */
import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  chmodSync,
  cpSync,
  existsSync,
  mkdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import path from "node:path";
import { HermitError } from "../../../src/errors.ts";
import { stdioLaunch } from "../../../src/deploy/adapter.ts";
import { loadManifest } from "../../../src/manifest/load.ts";
import { deploy, dirsUnder, GOLDEN_ADAPTER, sandbox, snapshot } from "../../helpers/deploy.ts";

async function rejects(p: Promise<unknown>, code: number, re: RegExp): Promise<HermitError> {
  let caught: HermitError | undefined;
  await assert.rejects(p, (err: unknown) => {
    assert.ok(err instanceof HermitError, String(err));
    assert.equal(err.exitCode, code, err.message);
    assert.match(err.message, re);
    caught = err;
    return true;
  });
  return caught!;
}

const theirs = `{\n  "mcpServers": {\n    "theirs": { "command": "their-server" }\n  }\n}\n`;

describe("a write that fails part-way", () => {
  it("puts back the files already written, names the file, and the next run works", async () => {
    const s = sandbox();
    try {
      writeFileSync(path.join(s.project, ".mcp.json"), theirs);
      // .mcp.json and CLAUDE.md are written first; .claude/skills/… cannot be: .claude is a file.
      // (A file where a directory must be stops root too, unlike a read-only directory.)
      writeFileSync(path.join(s.project, ".claude"), "not a directory\n");
      const before = snapshot(s.project, []);
      await rejects(
        deploy(s, { hosts: ["claude"] }),
        1,
        /^cannot write \.claude\/skills\/take-notes\/SKILL\.md \(E[A-Z]+(: [a-z ]+)?\); nothing was changed$/,
      );
      const after = snapshot(s.project, [".hermit"]);
      assert.deepEqual([...after.keys()], [...before.keys()]);
      for (const [rel, bytes] of before) assert.ok(bytes.equals(after.get(rel)!), `${rel} as it was`);
      assert.equal(
        existsSync(path.join(s.project, ".hermit")),
        false,
        "no record, no folder: it said nothing changed",
      );

      rmSync(path.join(s.project, ".claude"));
      const r = await deploy(s, { hosts: ["claude"] });
      assert.equal(r.hosts[0].items.find((i) => i.what === "MCP server notes")?.status, "created");
      await deploy(s, { hosts: ["claude"], remove: true });
      assert.equal(readFileSync(path.join(s.project, ".mcp.json"), "utf8"), theirs);
    } finally {
      s.cleanup();
    }
  });

  it("a host file the user made read-only is not replaced (a rename would get past its mode)", async () => {
    const s = sandbox();
    try {
      const file = path.join(s.project, ".mcp.json");
      writeFileSync(file, theirs);
      chmodSync(file, 0o444);
      await rejects(
        deploy(s, { hosts: ["claude"] }),
        2,
        /^\.mcp\.json is read-only \(mode 444\); hermit does not replace a file you made read-only: chmod u\+w \.mcp\.json to let it/,
      );
      assert.equal(readFileSync(file, "utf8"), theirs);
      assert.deepEqual([...snapshot(s.project, []).keys()], [".mcp.json"], "nothing else written");
    } finally {
      s.cleanup();
    }
  });

  it("a record that cannot be written undoes every file", async () => {
    const s = sandbox();
    try {
      // (.hermit being a file is refused before anything is written: file_kinds.test.ts)
      mkdirSync(path.join(s.project, ".hermit", ".gitignore", "in the way"), { recursive: true });
      await rejects(
        deploy(s, { hosts: ["claude", "codex"] }),
        1,
        /^cannot write \.hermit\/deployed\.json \(EISDIR/,
      );
      assert.deepEqual([...snapshot(s.project, []).keys()], [], "the project as it was");
      assert.deepEqual(dirsUnder(s.project), [
        ".hermit",
        ".hermit/.gitignore",
        ".hermit/.gitignore/in the way",
      ]);
    } finally {
      s.cleanup();
    }
  });
});

describe("backups", () => {
  it("--remove keeps backups of the files it changed in hermit's state directory", async () => {
    const s = sandbox();
    try {
      const file = path.join(s.project, ".mcp.json");
      writeFileSync(file, theirs);
      const deployed = await deploy(s, { hosts: ["claude"] });
      assert.equal(deployed.backups, path.join(s.project, ".hermit", "backup"));
      assert.equal(readFileSync(path.join(deployed.backups!, ".mcp.json"), "utf8"), theirs);
      const beforeRemoval = readFileSync(file, "utf8");

      const removed = await deploy(s, { hosts: ["claude"], remove: true });
      assert.equal(readFileSync(file, "utf8"), theirs);
      assert.equal(existsSync(path.join(s.project, ".hermit")), false, "the record and its folder are gone");
      const kept = removed.backups!;
      assert.ok(kept.startsWith(path.join(s.env.HERMIT_HOME, "removed") + path.sep), kept);
      assert.match(path.basename(kept), /-notes$/);
      const copy = path.join(kept, file.replace(/^[A-Za-z]:/, ""));
      assert.equal(readFileSync(copy, "utf8"), beforeRemoval, "the file as --remove found it");
      const skill = path.join(s.project, ".claude", "skills", "take-notes", "SKILL.md");
      assert.ok(existsSync(path.join(kept, skill)), "every file it changed, not only the first");
    } finally {
      s.cleanup();
    }
  });
});

describe("the record", () => {
  it("an unreadable record is an error, not an empty one; a broken one says what to do", async () => {
    const s = sandbox();
    try {
      await deploy(s, { hosts: ["claude"] });
      const record = path.join(s.project, ".hermit", "deployed.json");
      const kept = readFileSync(record);
      rmSync(record);
      mkdirSync(record); // unreadable as a file, for root too
      const before = snapshot(s.project, []);
      await rejects(
        deploy(s, { hosts: ["claude"] }),
        2,
        /deployed\.json is a folder; hermit's deploy record is a file: move the folder away and run again$/,
      );
      assert.deepEqual([...snapshot(s.project, []).keys()], [...before.keys()]);
      rmSync(record, { recursive: true });
      writeFileSync(record, "{ not json");
      const err = await rejects(
        deploy(s, { hosts: ["claude"] }),
        2,
        /is not a hermit deploy record; repair it, or delete it/,
      );
      assert.doesNotMatch(err.message, /backup/);
      writeFileSync(record, kept);
      await deploy(s, { hosts: ["claude"], remove: true });
    } finally {
      s.cleanup();
    }
  });

  it("--dry-run writes nothing, not even hermit's state directory", async () => {
    const s = sandbox();
    try {
      const r = await deploy(s, { hosts: ["claude"], dryRun: true });
      assert.ok(r.changed.length > 0);
      assert.equal(existsSync(s.env.HERMIT_HOME), false);
      assert.deepEqual([...snapshot(s.project, []).keys()], []);
    } finally {
      s.cleanup();
    }
  });
});

describe("what the adapter offers", () => {
  const s = sandbox();
  after(s.cleanup);

  it("a link in a skill that leads out of the adapter is refused, naming it and its target", async () => {
    const adapter = path.join(s.root, "leaky");
    cpSync(GOLDEN_ADAPTER, adapter, { recursive: true });
    const secret = path.join(s.home, "id_key");
    writeFileSync(secret, "PRIVATE KEY\n");
    symlinkSync(secret, path.join(adapter, "skills", "take-notes", "leak"));
    await rejects(
      deploy(s, { adapter, hosts: ["claude"] }),
      2,
      /^skills\/take-notes\/leak leads to \S*id_key, outside the adapter /,
    );
    assert.deepEqual([...snapshot(s.project, []).keys()], []);
    // a link that stays inside the adapter is followed
    rmSync(path.join(adapter, "skills", "take-notes", "leak"));
    symlinkSync(path.join(adapter, "CONTEXT.md"), path.join(adapter, "skills", "take-notes", "context.md"));
    await deploy(s, { adapter, hosts: ["claude"] });
    assert.equal(
      readFileSync(path.join(s.project, ".claude", "skills", "take-notes", "context.md"), "utf8"),
      readFileSync(path.join(adapter, "CONTEXT.md"), "utf8"),
    );
    await deploy(s, { adapter, hosts: ["claude"], remove: true });
  });

  it("exports.skills or exports.roles naming a missing folder is a usage error, like exports.context", async () => {
    for (const key of ["skills", "roles"]) {
      const adapter = path.join(s.root, `no-${key}`);
      cpSync(GOLDEN_ADAPTER, adapter, { recursive: true });
      rmSync(path.join(adapter, key), { recursive: true });
      await rejects(
        deploy(s, { adapter, hosts: ["claude"] }),
        2,
        new RegExp(`^exports\\.${key} names ${key}/, which is not a directory in the adapter`),
      );
      assert.deepEqual([...snapshot(s.project, []).keys()], []);
    }
  });

  it("the host entry names the adapter directory absolutely, whatever serve.command says", () => {
    const adapter = path.join(s.root, "launch");
    cpSync(GOLDEN_ADAPTER, adapter, { recursive: true });
    mkdirSync(path.join(adapter, "sub"));
    const manifest = path.join(adapter, "hermit.yaml");
    const text = readFileSync(manifest, "utf8");
    const argsFor = (command: string) => {
      writeFileSync(manifest, text.replace("command: hermit serve .", `command: ${command}`));
      return stdioLaunch(loadManifest(adapter), ["/bin/hermit", "--flag"]);
    };
    const cases: [string, string[]][] = [
      ["hermit serve", ["serve", adapter]],
      ["hermit serve .", ["serve", adapter]],
      ["hermit serve sub", ["serve", path.join(adapter, "sub")]],
      ["hermit serve ..", ["serve", s.root]],
      ["hermit serve --token-file ./tok", ["serve", adapter, "--token-file", path.join(adapter, "tok")]],
      ["hermit serve --port 9 --host=::1 sub", [
        "serve",
        "--port",
        "9",
        "--host=::1",
        path.join(adapter, "sub"),
      ]],
    ];
    for (const [command, args] of cases) {
      assert.deepEqual(
        argsFor(command),
        { kind: "stdio", command: "/bin/hermit", args: ["--flag", ...args] },
        command,
      );
    }
  });
});

describe("two deploys into one project under two state directories", () => {
  it("the one that writes second stops before writing and says to run again; nothing is lost", async () => {
    const s = sandbox();
    try {
      // each holds its own deploy lock (another user, another HERMIT_HOME): both read, then write
      const other = { ...s.env, HERMIT_HOME: path.join(s.root, "other-state") };
      const x = path.join(s.root, "x");
      mkdirSync(x);
      writeFileSync(
        path.join(x, "hermit.yaml"),
        "name: xnotes\nexports: { tools: [hi] }\ntools:\n  hi:\n    description: hi\n    run: [echo, hi]\n",
      );
      const pause = (env: Record<string, string>) => ({ ...env, HERMIT_DEPLOY_PAUSE_MS: "300" });
      const runs = await Promise.allSettled([
        deploy(s, { hosts: ["claude"], env: pause(s.env) }),
        deploy(s, { hosts: ["claude"], env: pause(other), adapter: x }),
      ]);
      const failed = runs.filter((r) => r.status === "rejected") as PromiseRejectedResult[];
      assert.equal(failed.length, 1, JSON.stringify(runs.map((r) => r.status)));
      assert.ok(failed[0].reason instanceof HermitError, String(failed[0].reason));
      assert.match(
        failed[0].reason.message,
        /changed while this run was deciding .*; nothing was written: run again$/,
      );
      const winner = runs[0].status === "fulfilled" ? "notes" : "xnotes";
      const mcp = JSON.parse(readFileSync(path.join(s.project, ".mcp.json"), "utf8"));
      assert.deepEqual(Object.keys(mcp.mcpServers), [winner], "the first one's entry is there, whole");
      // run again: both are there
      if (winner === "notes") await deploy(s, { hosts: ["claude"], env: other, adapter: x });
      else await deploy(s, { hosts: ["claude"] });
      const both = JSON.parse(readFileSync(path.join(s.project, ".mcp.json"), "utf8"));
      assert.deepEqual(Object.keys(both.mcpServers).sort(), ["notes", "xnotes"]);
    } finally {
      s.cleanup();
    }
  });
});
