/**
 * A tiny npm registry on loopback for tests of pinned packages: it serves one package's packument
 * (the versions "published" so far, the last one tagged latest) and their tarballs, made with
 * `npm pack` from a fixture directory. Real npm and npx talk to it through `registry=` in an
 * `.npmrc` under a temporary HOME, with their cache there too: nothing reaches the real registry
 * or the user's cache.
 */
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { cpSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import path from "node:path";

/** `npm pack` of `src` (plus `extra` files copied in) at `version`; returns the tarball's path. */
export function packVersion(src: string, version: string, into: string, extra: string[] = []): string {
  const dir = path.join(into, `src-${version}`);
  cpSync(src, dir, { recursive: true });
  for (const f of extra) cpSync(f, path.join(dir, path.basename(f)));
  const pkg = JSON.parse(readFileSync(path.join(dir, "package.json"), "utf8"));
  writeFileSync(path.join(dir, "package.json"), JSON.stringify({ ...pkg, version }, null, 2));
  const out = execFileSync("npm", ["pack", "--json", "--pack-destination", into], {
    cwd: dir,
    encoding: "utf8",
    env: { ...process.env, npm_config_update_notifier: "false" },
  });
  return path.join(into, JSON.parse(out)[0].filename);
}

export interface Registry {
  url: string;
  /** Make `version` (a tarball from packVersion) available, and the latest. */
  publish(version: string, tarball: string): void;
  /** Requests seen, e.g. `GET /hermit-rug-fixture`. */
  requests: string[];
  /** Stop serving tarballs (404): what npm still installs then comes from its cache. */
  withholdTarballs(): void;
  close(): Promise<void>;
}

export async function startRegistry(name: string): Promise<Registry> {
  const versions = new Map<string, Buffer>();
  const requests: string[] = [];
  let url = "";
  let tarballs = true;
  const server: Server = createServer((req, res) => {
    requests.push(`${req.method} ${req.url}`);
    if (req.url === `/${name.replace("/", "%2f")}` || req.url === `/${name}`) {
      const packument = {
        name,
        "dist-tags": { latest: [...versions.keys()].at(-1) },
        versions: Object.fromEntries(
          [...versions].map(([v, tgz]) => [v, {
            name,
            version: v,
            bin: { [name]: "server.mjs" },
            dist: {
              tarball: `${url}/-/${name}-${v}.tgz`,
              integrity: "sha512-" + createHash("sha512").update(tgz).digest("base64"),
            },
          }]),
        ),
      };
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify(packument));
      return;
    }
    const m = /^\/-\/.+-(\d+\.\d+\.\d+)\.tgz$/.exec(req.url ?? "");
    const tgz = m && tarballs && versions.get(m[1]);
    if (tgz) {
      res.writeHead(200, { "content-type": "application/octet-stream" });
      res.end(tgz);
      return;
    }
    res.writeHead(404, { "content-type": "application/json" });
    res.end("{}");
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  return {
    url,
    requests,
    withholdTarballs: () => void (tarballs = false),
    publish: (version, tarball) => void versions.set(version, readFileSync(tarball)),
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

/** A HOME whose .npmrc points npm at `registry`, with its cache under it. */
export function npmHome(home: string, registry: string): void {
  mkdirSync(home, { recursive: true });
  writeFileSync(
    path.join(home, ".npmrc"),
    [
      `registry=${registry}/`,
      `cache=${path.join(home, "npm-cache")}`,
      "update-notifier=false",
      "audit=false",
      "fund=false",
      "",
    ].join("\n"),
  );
}
