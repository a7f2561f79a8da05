/**
 * `hermit login DIR SERVER` and `hermit logout DIR SERVER`: OAuth 2.1 for an `auth: oauth`
 * upstream. login prints the authorization address (it never opens a browser) and takes the
 * answer from the loopback callback or a pasted line; a failed or cancelled login leaves the
 * stored one as it was. Exit 0 ok, 1 the login failed, 2 usage (no such server, not OAuth),
 * 4 refused (safe mode, screening).
 */
import process from "node:process";
import { createInterface } from "node:readline";
import type { Command } from "@commander-js/extra-typings";
import { Exit } from "../errors.ts";
import { waitingOn } from "../progress.ts";
import { loadManifest } from "../manifest/load.ts";
import type { SetExit } from "./app.ts";
import { examples } from "./help.ts";
import { positiveSeconds } from "./options.ts";
import { writeErr, writeOut } from "./output.ts";

function readStdinLines(onLine: (line: string) => void): () => void {
  const rl = createInterface({ input: process.stdin, crlfDelay: Infinity });
  rl.on("line", onLine);
  return () => {
    rl.close();
    process.stdin.pause();
  };
}

export function registerLogin(program: Command, setExit: SetExit): void {
  program.command("login")
    .description(
      "log in to an OAuth upstream (auth: oauth): prints the address to open, then takes the answer",
    )
    .addHelpText(
      "after",
      examples(
        ["hermit login my-tools search", "log in to mcp_servers.search"],
        ["hermit login my-tools search --timeout 600"],
      ),
    )
    .argument("<dir>", "the adapter directory")
    .argument("<server>", "the mcp_servers entry")
    .option(
      "--timeout <seconds>",
      "how long to wait for the browser or a pasted answer",
      positiveSeconds("--timeout"),
      300,
    )
    .action(async (dir, server, opts) => {
      const manifest = loadManifest(dir);
      const { login } = await import("../mcp/oauth/login.ts");
      const io = { say: writeErr, readLines: readStdinLines, waiting: (what: string) => waitingOn(what) };
      const r = await login(manifest, server, io, {
        timeoutMs: opts.timeout * 1000,
      });
      const tools = `${r.tools} tool${r.tools === 1 ? "" : "s"}`;
      await writeOut(
        r.status === "logged-in"
          ? `logged in to mcp_servers.${server} (${tools}); credentials in ${r.dir}\n`
          : `mcp_servers.${server} answered without asking for a login (${tools}); nothing stored\n`,
      );
      setExit(Exit.ok);
    });
}

export function registerLogout(program: Command, setExit: SetExit): void {
  program.command("logout")
    .description("forget the stored OAuth login of an upstream")
    .addHelpText(
      "after",
      examples(
        ["hermit logout my-tools search"],
      ),
    )
    .argument("<dir>", "the adapter directory")
    .argument("<server>", "the mcp_servers entry")
    .action(async (dir, server) => {
      const manifest = loadManifest(dir);
      const { logout } = await import("../mcp/oauth/login.ts");
      const r = logout(manifest, server);
      await writeOut(
        r.removed
          ? `logged out of mcp_servers.${server}; removed ${r.dir}\n`
          : `mcp_servers.${server} had no stored login\n`,
      );
      setExit(Exit.ok);
    });
}
