/**
 * Each package runner's command-line grammar, as its own documentation and parser have it (npm's
 * config definitions and npx's argument parser, uv's `tool run` reference, `bun x --help`, pnpm's
 * and yarn's dlx, `pipx run --help`, `deno run --help` and `deno x --help` of deno 2.9): the
 * options without a value (deno's `--allow-read[=…]` takes one only after `=`), those that take
 * one, the ones that name the
 * package, the commands that are runners (or run one after their subcommand words: `npm exec`),
 * and the scan of an argument list by them. An option that is in neither list, followed by a bare
 * word, stops the scan: that word may be its value, so which package runs is unclear. Pure.
 */
import type { Runner } from "./types.ts";

export type Dialect = "npx" | "npm" | "pnpm" | "yarn" | "bunx" | "uvx" | "pipx" | "deno";

export interface Options {
  flags: Set<string>;
  values: Set<string>;
  /** The options that name the package (`--package`; uv: `--from`). */
  packages: Set<string>;
  /** The options that add packages beside it (uv: `--with`). */
  extras?: Set<string>;
  /** A word a flag takes as its value when it follows (npm: `--yes false`, `--color always`). */
  flagWord?: (flag: string, word: string) => boolean;
}

const set = (...lists: string[]) => new Set(lists.join(" ").split(/\s+/).filter(Boolean));
const longs = (list: string, prefix = "--") =>
  list.split(/\s+/).filter(Boolean).map((w) => prefix + w).join(" ");

/** npm's configuration options without a value (`@npmcli/config` definitions typed Boolean). */
const NPM_FLAGS = `all allow-same-version audit bin-links bypass-2fa color commit-hooks
  dangerously-allow-all-scripts description dev diff-ignore-all-space diff-name-only diff-no-prefix
  diff-text dry-run engine-strict expect-results force foreground-scripts format-package-lock fund
  git-tag-version global global-style if-present ignore-scripts include-staged
  include-workspace-root include-attestations init-private install-links json legacy-bundling
  legacy-peer-deps link long offline omit-lockfile-registry-resolved optional package-lock
  package-lock-only parseable allow-scripts-pending allow-scripts-pin prefer-dedupe prefer-offline
  prefer-online production progress provenance read-only rebuild-bundle save save-bundle save-dev
  save-exact save-optional save-peer save-prod packages-all shrinkwrap sign-git-commit sign-git-tag
  strict-peer-deps strict-allow-scripts strict-ssl timing unicode update-notifier usage version
  versions workspaces workspaces-update yes`;
/** npm's configuration options that take a value, and its shorthands for them. */
const NPM_VALUES = `_auth access allow-directory allow-file allow-git allow-remote allow-scripts also
  audit-level auth-type before ca cache cache-max cache-min cafile call cert cidr cpu depth diff
  diff-dst-prefix diff-src-prefix diff-unified editor expect-result-count expires fetch-retries
  fetch-retry-factor fetch-retry-maxtimeout fetch-retry-mintimeout fetch-timeout git globalconfig
  heading https-proxy include init-author-email init-author-name init-author-url init-license
  init-module init-type init-version init.author.email init.author.name init.author.url
  init.license init.module init.version install-strategy key libc local-address location loglevel
  logs-dir logs-max name maxsockets message min-release-age min-release-age-exclude node-gyp
  node-options noproxy omit only orgs os otp package pack-destination packages prefix preid
  provenance-file proxy registry replace-registry-host save-prefix sbom-format sbom-type scope
  scopes packages-and-scopes-permission orgs-permission password token-description script-shell
  searchexclude searchlimit searchopts searchstaleness shell tag tag-version-prefix umask
  user-agent userconfig viewer which workspace enjoy-by reg`;
/** npm's shorthands that expand to a flag, or to an option with its value (`-d`: `--loglevel info`). */
const NPM_SHORT_FLAGS = `-y -q -s -d -dd -ddd -a -f -g -l -S -B -D -E -O -P -? -H -h -v --quiet --silent
  --verbose --local --porcelain --readonly --iwr --ws --desc --help`;

const UV_FLAGS = `--isolated --lfs --managed-python --no-managed-python --no-binary --no-build
  --no-build-isolation --no-cache --no-cache-dir -n --no-config --no-env-file --no-index --no-progress
  --no-python-downloads --allow-python-downloads --no-sources --offline --no-offline --quiet -q -qq
  --refresh --no-refresh --reinstall --force-reinstall --no-reinstall --system-certs --native-tls
  --no-native-tls --upgrade -U --no-upgrade --verbose -v -vv --help -h --version -V --compile-bytecode
  --compile --no-compile-bytecode --preview --no-preview --show-resolution --build-isolation`;
const UV_VALUES = `--with -w --with-editable --with-requirements --python -p --index --index-url -i
  --extra-index-url --default-index --find-links -f --directory --project --cache-dir --config-file
  --constraints --constraint -c --overrides --override --build-constraints --build-constraint -b
  --env-file --python-platform --index-strategy --keyring-provider --resolution --prerelease
  --exclude-newer --exclude-newer-package --link-mode --fork-strategy --refresh-package
  --reinstall-package --upgrade-package --upgrade-group -P --color --allow-insecure-host
  --trusted-host --config-setting --config-settings -C --config-settings-package
  --no-binary-package --no-build-package --no-build-isolation-package --no-sources-package
  --torch-backend --python-preference --preview-features`;

/** Each runner's options: flags, options with a value, and the package option. */
export const OPTIONS: Record<Dialect, Options> = {
  // npx itself: anything but a known flag takes the next bare word as its value
  npx: {
    flags: set(longs(NPM_FLAGS), NPM_SHORT_FLAGS, "--no-install --browser"),
    values: set(longs(NPM_VALUES), "-c -w -C -L -m -p --node-arg"),
    packages: set("--package -p"),
  },
  // npm exec reads options anywhere before `--` (nopt), -p is --parseable there
  npm: {
    flags: set(longs(NPM_FLAGS), longs(NPM_FLAGS, "--no-"), NPM_SHORT_FLAGS, "-p -n --no"),
    values: set(longs(NPM_VALUES), "-c -w -C -L -m --browser"),
    packages: set("--package"),
    flagWord: (flag, word) =>
      ["true", "false", "null"].includes(word) || (flag === "--color" && word === "always"),
  },
  pnpm: {
    flags: set(`--shell-mode -c --silent -s --workspace-root -w --recursive -r --aggregate-output
      --use-stderr --stream --parallel --color --no-color --help -h --version -v --ignore-workspace
      --offline --prefer-offline --ignore-scripts --reverse --bail --no-bail --sort --no-sort`),
    values: set(`--package --allow-build --dir -C --filter -F --filter-prod --test-pattern
      --changed-files-ignore-pattern --reporter --loglevel --workspace-concurrency --registry --cpu --os
      --libc --store-dir --cache-dir --virtual-store-dir --modules-dir --lockfile-dir`),
    packages: set("--package"),
  },
  yarn: {
    flags: set("-q --quiet -h --help -v --version"),
    values: set("--cwd"),
    packages: set("-p --package"),
  },
  bunx: {
    flags: set("--bun -b --no-install --trust --ignore-scripts --verbose --silent --smol --help -h"),
    values: set(`--cwd --env-file --minimum-release-age --registry --ca --cafile --config -c --preload -r
      --tsconfig-override`),
    packages: set("--package -p"),
  },
  uvx: { flags: set(UV_FLAGS), values: set(UV_VALUES), packages: set("--from"), extras: set("--with -w") },
  pipx: {
    flags: set(`--no-cache --pypackages --system-site-packages --editable -e --verbose -v --quiet -q
      --fetch-missing-python --path --help -h --global --version`),
    values: set("--python --index-url -i --pip-args"),
    packages: set("--spec"),
  },
  deno: {
    flags: set(
      longs(`allow-all permission-set no-prompt allow-read allow-write allow-import allow-net allow-env
        allow-sys allow-run allow-ffi deny-read deny-write deny-net deny-env deny-sys deny-run deny-ffi
        deny-import ignore-env ignore-read yes ignore-scripts check no-check env-file allow-scripts
        no-remote no-npm node-modules-dir vendor no-config reload no-lock frozen frozen-lockfile
        unsafely-ignore-certificate-errors cached-only v8-flags watch hmr watch-exclude no-clear-screen
        no-code-cache coverage use-env-proxy inspect inspect-brk inspect-wait quiet help`),
      "-A -P -R -W -I -N -E -S -y -r -q -h",
    ),
    values: set(`--import-map --node-modules-linker --config -c --cert --min-dep-age --location --ext
      --seed --preload --require --conditions --inspect-publish-uid --lock --install-alias --log-level -L`),
    packages: set("--package -p"),
  },
};

/**
 * The commands that are runners, or run one after their subcommand words (`npm exec`), and the
 * runner the lock records for each (aliases folded: `npm x` is `npm exec`, `bun x` is `bunx`).
 * deno runs a package only when its script is `npm:…` or `jsr:…` (`deno run`, or `deno npm:…`);
 * `deno x` and `dx` read a bare name as an npm package, as npx does.
 */
export const HOSTS: Record<string, { dialect: Dialect; runner: Runner; words: string[][] }> = {
  npx: { dialect: "npx", runner: "npx", words: [[]] },
  npm: { dialect: "npm", runner: "npm exec", words: [["exec"], ["x"]] },
  pnpx: { dialect: "pnpm", runner: "pnpm dlx", words: [[]] },
  pnpm: { dialect: "pnpm", runner: "pnpm dlx", words: [["dlx"]] },
  yarn: { dialect: "yarn", runner: "yarn dlx", words: [["dlx"]] },
  bunx: { dialect: "bunx", runner: "bunx", words: [[]] },
  bun: { dialect: "bunx", runner: "bunx", words: [["x"]] },
  uvx: { dialect: "uvx", runner: "uvx", words: [[]] },
  uv: { dialect: "uvx", runner: "uvx", words: [["tool", "run"]] },
  pipx: { dialect: "pipx", runner: "pipx run", words: [["run"]] },
  deno: { dialect: "deno", runner: "deno", words: [["run"], ["x"]] },
  dx: { dialect: "deno", runner: "deno", words: [[]] },
};

export function baseName(command: string): string {
  return command.split(/[\\/]/).pop()!.toLowerCase().replace(/\.(cmd|exe|bat|ps1)$/, "");
}

export interface Spec {
  index: number;
  prefix: string;
  spec: string;
}

export interface Scan {
  /** What the package options named (`--package x`, `--package=x`, `--from x`). */
  options: Spec[];
  /** What the options that add packages beside it named (`--with x`). */
  extras: Spec[];
  /** Bare words, up to the number asked for; after `--`, every argument is one. */
  words: { index: number; text: string }[];
  /** An option hermit does not know, followed by a bare word it may take as its value. */
  unclear?: string;
  /** The words came after `--`. */
  dashed?: boolean;
}

export function scan(args: readonly string[], from: number, o: Options, want: number): Scan {
  const out: Scan = { options: [], extras: [], words: [] };
  for (let i = from; i < args.length && out.words.length < want; i++) {
    const a = args[i];
    if (a === "--") {
      out.dashed = true;
      for (let j = i + 1; j < args.length && out.words.length < want; j++) {
        out.words.push({ index: j, text: args[j] });
      }
      break;
    }
    if (!a.startsWith("-")) {
      out.words.push({ index: i, text: a });
      continue;
    }
    const eq = a.indexOf("=");
    const name = eq > 0 ? a.slice(0, eq) : a;
    const next = args[i + 1];
    const into = o.packages.has(name) ? out.options : o.extras?.has(name) ? out.extras : undefined;
    if (into) {
      if (eq > 0) into.push({ index: i, prefix: a.slice(0, eq + 1), spec: a.slice(eq + 1) });
      else if (next !== undefined) into.push({ index: ++i, prefix: "", spec: next });
    } else if (eq > 0) continue;
    else if (o.values.has(name)) i++;
    else if (o.flags.has(name)) {
      if (next !== undefined && o.flagWord?.(name, next)) i++;
    } else if (next !== undefined && !next.startsWith("-")) {
      out.unclear = name;
      return out;
    }
  }
  return out;
}
