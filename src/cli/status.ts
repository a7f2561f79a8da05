/** `hermit status DIR` and `hermit stop DIR`: a standalone service's state / stop it cleanly. */
import type { Command } from "@commander-js/extra-typings";
import { Exit } from "../errors.ts";
import { loadManifest } from "../manifest/load.ts";
import type { SetExit } from "./app.ts";
import { examples } from "./help.ts";
import { printJson, writeOut } from "./output.ts";

export function registerStatus(program: Command, setExit: SetExit): void {
  program.command("status")
    .description(
      "show a standalone service: url, pid, uptime, clients, upstream states (exit 5 when none runs)",
    )
    .addHelpText(
      "after",
      examples(
        ["hermit status team-memory", "is its service running, and how are its upstreams"],
        ["hermit status team-memory --json"],
      ),
    )
    .argument("[dir]", "the adapter directory", ".")
    .option("--json", "print the status as JSON")
    .action(async (dir, opts) => {
      const m = loadManifest(dir);
      const { serviceStatus } = await import("../service/control.ts");
      const s = await serviceStatus(m.dir);
      if (opts.json) await printJson({ adapter: m.name, ...s });
      else if (!s.running) {
        await writeOut(`${m.name}: ${s.starting ? "starting" : "not running"} (${s.why})\n`);
      } else {
        const lines = [
          `${m.name}: running at ${s.url}`,
          `  pid ${s.pid}, up ${s.uptime_s} s${
            s.host_launched ? " (started by a host; stops when idle)" : ""
          }`,
          s.busy ? `  busy: ${s.busy}` : `  clients ${s.clients}, tools ${s.tools}`,
          ...(s.upstreams ?? []).map((u) =>
            `  mcp_servers.${u.name}: ${u.state} (${u.transport}, ${u.tools} tools${
              u.pid ? `, pid ${u.pid}` : ""
            })${u.lastError ? ` — ${u.lastError}` : ""}`
          ),
        ];
        await writeOut(lines.join("\n") + "\n");
      }
      setExit(s.running ? Exit.ok : Exit.noService);
    });

  program.command("stop")
    .description("stop a standalone service cleanly (its upstreams too)")
    .addHelpText(
      "after",
      examples(
        ["hermit stop team-memory"],
      ),
    )
    .argument("[dir]", "the adapter directory", ".")
    .action(async (dir) => {
      const m = loadManifest(dir);
      const { stopService } = await import("../service/control.ts");
      const r = await stopService(m.dir);
      await writeOut(r.stopped ? `${m.name}: stopped (pid ${r.pid})\n` : `${m.name}: ${r.why}\n`);
      setExit(r.stopped ? Exit.ok : Exit.noService);
    });
}
