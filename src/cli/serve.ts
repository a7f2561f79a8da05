/**
 * `hermit serve DIR`: what a host runs. A session adapter is served over stdio; a standalone
 * adapter gets a relay to its shared service (found, or launched under the lock when
 * `serve.host_launch` allows). `--standalone` runs that service itself, `--serve-url` relays to a
 * service anywhere.
 */
import { type Command, Option } from "@commander-js/extra-typings";
import path from "node:path";
import process from "node:process";
import { Exit, usageError } from "../errors.ts";
import { safeMode } from "../gates/safe_mode.ts";
import { loadManifest } from "../manifest/load.ts";
import { readToken, TOKEN_VAR } from "../service/access.ts";
import type { SetExit } from "./app.ts";
import { examples } from "./help.ts";
import { writeErr, writeOut } from "./output.ts";
import { serveAdapter } from "./serve_adapter.ts";

const collect = (v: string, prev: string[]) => [...prev, v];
const port = (v: string) => {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0 || n > 65535) {
    throw usageError(`--port must be a port number, got '${v}'`);
  }
  return n;
};

export function registerServe(program: Command, setExit: SetExit): void {
  program.command("serve")
    .description(
      "serve an adapter to a host over stdio (logs go to stderr); or run or reach its shared service",
    )
    .addHelpText(
      "after",
      examples(
        ["hermit serve my-tools", "what a host runs: MCP over stdio"],
        [
          "hermit serve my-tools --standalone --daemon",
          "a standalone adapter's shared service, in the background",
        ],
      ),
    )
    .argument("[dir]", "the adapter directory", ".")
    .option("--standalone", "run the shared HTTP service for this adapter (prints its endpoint)")
    .option("--daemon", "with --standalone: run it in the background, logs in DIR/.serve/log")
    .option("--port <port>", "with --standalone: the port (default: serve.port, else a free one)", port)
    .option("--host <address>", "with --standalone: the interface to bind (default 127.0.0.1)")
    .option("--token-file <file>", "the bearer token, from a file (needed off loopback; for --serve-url too)")
    .option(
      "--allowed-host <name>",
      "with --standalone off loopback: a Host name clients use (repeatable)",
      collect,
      [] as string[],
    )
    .option(
      "--allowed-origin <origin>",
      "with --standalone: a browser Origin to accept (repeatable)",
      collect,
      [] as string[],
    )
    .option(
      "--serve-url <url>",
      `relay to the service at this URL (token from --token-file or ${TOKEN_VAR})`,
    )
    .addOption(new Option("--host-launched", "started by a relay: stop after the idle period").hideHelp())
    .addOption(
      new Option("--no-warm-start", "relay: answer nothing before the service is up (check uses it)")
        .hideHelp(),
    )
    .addOption(
      new Option(
        "--launch-service",
        "relay: find or launch the service, report on stdout (src/relay/launcher.ts)",
      )
        .hideHelp(),
    )
    .action(async (dir, opts) => {
      const manifest = loadManifest(dir);
      if (
        opts.launchService && manifest.serve.lifecycle === "standalone" && !opts.standalone && !opts.serveUrl
      ) {
        const { launchServiceMain } = await import("../relay/launcher.ts");
        return setExit(await launchServiceMain(manifest, (line) => writeOut(`${line}\n`)));
      }
      if (opts.standalone) {
        if (opts.serveUrl) throw usageError("--standalone and --serve-url exclude each other");
        if (opts.daemon) {
          const { alreadyRunningError, findService, launchUnderLock, shownDir } = await import(
            "../service/launch.ts"
          );
          const running = await findService(manifest.dir);
          if (running) throw alreadyRunningError(manifest, running);
          // the daemon is this same command in the background, with the same service options
          const serviceArgs = [
            ...(opts.port !== undefined ? ["--port", String(opts.port)] : []),
            ...(opts.host ? ["--host", opts.host] : []),
            ...(opts.tokenFile ? ["--token-file", path.resolve(opts.tokenFile)] : []),
            ...opts.allowedHost.flatMap((h) => ["--allowed-host", h]),
            ...opts.allowedOrigin.flatMap((o) => ["--allowed-origin", o]),
          ];
          // under the launch lock, as relays launch: of several started at once, one runs
          const got = await launchUnderLock(manifest, false, serviceArgs);
          if (!got.launched) throw alreadyRunningError(manifest, got.endpoint);
          const ep = got.endpoint;
          await writeOut(`${ep.url}\n`);
          writeErr(
            `hermit: ${manifest.name} service running at ${ep.url} (pid ${ep.pid}); stop it with 'hermit stop ${
              shownDir(manifest)
            }'\n`,
          );
          return setExit(Exit.ok);
        }
        const { runService } = await import("../service/service.ts");
        return setExit(
          await runService(manifest, {
            host: opts.host ?? "127.0.0.1",
            port: opts.port ?? manifest.serve.port ?? 0,
            tokenFile: opts.tokenFile,
            allowedHosts: opts.allowedHost,
            allowedOrigins: opts.allowedOrigin,
            hostLaunched: opts.hostLaunched === true,
            onReady: (ep) => void writeOut(`${ep.url}\n`),
          }),
        );
      }
      const serviceOnly = [
        ["--daemon", opts.daemon],
        ["--port", opts.port !== undefined],
        ["--host", opts.host !== undefined],
        ["--allowed-host", opts.allowedHost.length > 0],
        ["--allowed-origin", opts.allowedOrigin.length > 0],
      ].find(([, given]) => given);
      if (serviceOnly) throw usageError(`${serviceOnly[0]} goes with --standalone`);
      if (opts.tokenFile && !opts.serveUrl) {
        throw usageError("--token-file goes with --standalone or --serve-url");
      }
      if (opts.serveUrl && !safeMode(process.env)) {
        // the next relay for this adapter takes the fast path (src/relay/main.ts); `serveAdapter`
        // does the same for a local standalone adapter
        await (await import("../relay/plan.ts")).rememberManifest(manifest);
        const token = opts.tokenFile ? readToken(opts.tokenFile) : process.env[TOKEN_VAR] || undefined;
        const { relayTo } = await import("../relay/targets.ts");
        return setExit(await relayTo(manifest, opts.serveUrl, token));
      }
      setExit(await serveAdapter(manifest, opts.warmStart !== false));
    });
}
