/**
 * deploy and convert meet what is at a file's place, not only files: a FIFO (or a device) where a
 * host file or the record should be is refused at once (reading it would block the run, which
 * holds the machine-wide lock), a link to nothing is refused rather than replaced by a plain file,
 * a broken record (not JSON, a folder, its folder a file) is bad input (exit 2) with advice that
 * fits, `--remove` that puts back the user's own entry says so, and a file with other names (hard
 * links) is not split from them.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import {
  existsSync,
  linkSync,
  lstatSync,
  mkdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import path from "node:path";
import process from "node:process";
import { HermitError } from "../../../src/errors.ts";
import { readBytes } from "../../../src/hosts/files.ts";
import { renderReport } from "../../../src/deploy/report.ts";
import { deploy, sandbox, snapshot } from "../../helpers/deploy.ts";

const posix = process.platform !== "win32";
const hasMkfifo = posix && spawnSync("sh", ["-c", "command -v mkfifo"]).status === 0;

async function rejects(p: Promise<unknown>, code: number, re: RegExp): Promise<HermitError> {
  let caught: HermitError | undefined;
  await assert.rejects(p, (err: unknown) => {
    assert.ok(err instanceof HermitError, String(err));
    assert.equal(err.exitCode, code, err.message);
    assert.match(err.message, re);
    assert.equal(err.message.split("\n").length, 1, "one line");
    caught = err;
    return true;
  });
  return caught!;
}

/**
 * A FIFO at `file`, and a writer that feeds it "{" after a second: code that opens the FIFO to
 * read it blocks until then and gets a broken file (so a test fails instead of hanging forever);
 * code that refuses it never unblocks the writer, which `stop` ends.
 */
function fifoWithWriter(file: string): { stop(): void } {
  assert.equal(spawnSync("mkfifo", [file]).status, 0, "mkfifo");
  const writer: ChildProcess = spawn("sh", ["-c", 'sleep 1; printf "{" > "$0"', file], { stdio: "ignore" });
  return {
    stop() {
      writer.kill("SIGKILL");
      rmSync(file, { force: true });
    },
  };
}

describe("a FIFO or a device where a file should be", { skip: !hasMkfifo && "no mkfifo here" }, () => {
  for (const dryRun of [false, true]) {
    it(`a FIFO at a host file is refused at once, naming it${dryRun ? " (--dry-run)" : ""}`, async () => {
      const s = sandbox();
      const fifo = fifoWithWriter(path.join(s.project, ".mcp.json"));
      try {
        await rejects(
          deploy(s, { hosts: ["claude"], dryRun }),
          2,
          /^\.mcp\.json: not a regular file \(a FIFO\); hermit edits only regular files: remove it or replace it with a file$/,
        );
        assert.equal(existsSync(path.join(s.project, ".hermit")), false, "nothing written");
      } finally {
        fifo.stop();
        s.cleanup();
      }
    });
  }

  it("a FIFO as the record is refused at once, naming it", async () => {
    const s = sandbox();
    mkdirSync(path.join(s.project, ".hermit"));
    const record = path.join(s.project, ".hermit", "deployed.json");
    const fifo = fifoWithWriter(record);
    try {
      await rejects(
        deploy(s, { hosts: ["claude"] }),
        2,
        /deployed\.json: not a regular file \(a FIFO\); hermit keeps its deploy record only in a regular file: remove it and run again$/,
      );
      assert.deepEqual([...snapshot(s.project).keys()], [], "nothing written");
    } finally {
      fifo.stop();
      s.cleanup();
    }
  });

  it("readBytes refuses a device (opened, it is not a file hermit edits)", () => {
    assert.throws(() => readBytes("/dev/null"), /\/dev\/null: not a regular file \(a character device\)/);
  });
});

describe("a broken record is bad input (exit 2), with advice that fits", () => {
  it("not JSON: repair or delete it", async () => {
    const s = sandbox();
    try {
      mkdirSync(path.join(s.project, ".hermit"));
      writeFileSync(path.join(s.project, ".hermit", "deployed.json"), "garbage\n");
      await rejects(
        deploy(s, { hosts: ["claude"] }),
        2,
        /deployed\.json is not a hermit deploy record; repair it, or delete it/,
      );
    } finally {
      s.cleanup();
    }
  });

  it("a folder as the record: move it away", async () => {
    const s = sandbox();
    try {
      mkdirSync(path.join(s.project, ".hermit", "deployed.json"), { recursive: true });
      const err = await rejects(
        deploy(s, { hosts: ["claude"] }),
        2,
        /deployed\.json is a folder; hermit's deploy record is a file: move the folder away and run again$/,
      );
      assert.doesNotMatch(err.message, /readable/);
    } finally {
      s.cleanup();
    }
  });

  it("a file where the record's folder should be: move it away", async () => {
    const s = sandbox();
    try {
      writeFileSync(path.join(s.project, ".hermit"), "mine\n");
      await rejects(
        deploy(s, { hosts: ["claude"] }),
        2,
        /\.hermit is a file; hermit keeps its deploy record in a folder there: move the file away and run again$/,
      );
      assert.equal(readFileSync(path.join(s.project, ".hermit"), "utf8"), "mine\n");
      assert.deepEqual([...snapshot(s.project, []).keys()], [".hermit"], "nothing written");
    } finally {
      s.cleanup();
    }
  });
});

describe("--remove after --force", () => {
  it("says it put back the user's own entry, not that it removed it", async () => {
    const s = sandbox();
    try {
      const mine = `{\n  "mcpServers": {\n    "notes": { "command": "mine" }\n  }\n}\n`;
      writeFileSync(path.join(s.project, ".mcp.json"), mine);
      await deploy(s, { hosts: ["claude"], force: true });
      for (const dryRun of [true, false]) {
        const r = await deploy(s, { hosts: ["claude"], remove: true, dryRun });
        const entry = r.hosts[0].items.find((i) => i.what === "MCP server notes");
        assert.equal(entry?.status, "restored");
        const text = renderReport(r);
        assert.match(
          text,
          new RegExp(`^  ${dryRun ? "would put" : "put"} back your MCP server notes in \\.mcp\\.json$`, "m"),
        );
        assert.doesNotMatch(text, /removed? MCP server notes/);
      }
      assert.equal(readFileSync(path.join(s.project, ".mcp.json"), "utf8"), mine);
    } finally {
      s.cleanup();
    }
  });
});

describe("a link to nothing", { skip: !posix && "symlinks" }, () => {
  it("a host file that is a dangling link is refused, and the link is kept", async () => {
    const s = sandbox();
    try {
      mkdirSync(path.join(s.project, "config"));
      const link = path.join(s.project, ".mcp.json");
      symlinkSync("config/mcp.json", link);
      for (const dryRun of [false, true]) {
        await rejects(
          deploy(s, { hosts: ["claude"], dryRun }),
          2,
          /^\.mcp\.json is a link to config\/mcp\.json, which does not exist: create it \(or remove the link\) and run again$/,
        );
      }
      assert.ok(lstatSync(link).isSymbolicLink(), "still a link");
      assert.equal(readlinkSync(link), "config/mcp.json");
      assert.equal(existsSync(path.join(s.project, ".hermit")), false, "nothing written");
    } finally {
      s.cleanup();
    }
  });

  it("a host folder that is a dangling link is refused the same way, naming the link", async () => {
    const s = sandbox();
    try {
      const missing = path.join(s.root, "missing");
      symlinkSync(missing, path.join(s.project, ".cursor"));
      await rejects(
        deploy(s, { hosts: ["cursor"] }),
        2,
        new RegExp(
          `^\\.cursor is a link to ${missing}, which does not exist: create it \\(or remove the link\\) and run again$`,
        ),
      );
      assert.equal(existsSync(missing), false);
    } finally {
      s.cleanup();
    }
  });

  it("a link whose target exists is still written through, and --remove keeps the link", async () => {
    const s = sandbox();
    try {
      mkdirSync(path.join(s.project, "config"));
      writeFileSync(path.join(s.project, "config", "mcp.json"), "{}\n");
      const link = path.join(s.project, ".mcp.json");
      symlinkSync("config/mcp.json", link);
      await deploy(s, { hosts: ["claude"] });
      assert.ok(lstatSync(link).isSymbolicLink(), "still a link");
      assert.match(readFileSync(path.join(s.project, "config", "mcp.json"), "utf8"), /"notes"/);
      await deploy(s, { hosts: ["claude"], remove: true });
      assert.ok(lstatSync(link).isSymbolicLink(), "still a link");
      assert.equal(readFileSync(path.join(s.project, "config", "mcp.json"), "utf8"), "{}\n");
    } finally {
      s.cleanup();
    }
  });
});

describe("a host file with more than one name (a hard link)", () => {
  it("is refused, naming the file and the fix: replacing it whole split it from its other names", {
    skip: !posix,
  }, async () => {
    // Seen: ~/.claude.json hard-linked to a dotfiles copy became a file of its own on convert, and
    // stayed one after --remove; the dotfiles copy never had the entry.
    const s = sandbox();
    try {
      const dots = path.join(s.root, "dots.json");
      writeFileSync(dots, "{}\n");
      linkSync(dots, path.join(s.home, ".claude.json"));
      await rejects(
        deploy(s, { hosts: ["claude"], scope: "user" }),
        2,
        /^~\/\.claude\.json has 2 names \(hard links\); hermit replaces a file whole.*ln -sf.*nothing was written$/,
      );
      assert.equal(statSync(dots).nlink, 2, "still one file");
      assert.equal(readFileSync(dots, "utf8"), "{}\n");
      const created = await deploy(s, { hosts: ["claude"], scope: "user", dryRun: true });
      assert.equal(created.hosts[0].host, "claude", "a dry run shows the change");
    } finally {
      s.cleanup();
    }
  });
});
