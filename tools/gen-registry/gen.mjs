// Builds crates/wavesh-policy/data/registry.jsonl from @withfig/autocomplete (exactly the
// version pinned in package.json): for every root command, its names (aliases included),
// its options (with "=" when they take an argument), its subcommands, and its argument
// flags as bits. Dynamic generators and loadSpec-only nodes are skipped and counted.
//
//   node gen.mjs            write the registry
//   node gen.mjs --check    regenerate into a temporary directory and compare byte for byte
import { createHash } from "node:crypto";
import { readFileSync, writeFileSync, mkdtempSync, readdirSync, statSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const pkgDir = join(here, "node_modules", "@withfig", "autocomplete");
const buildDir = join(pkgDir, "build");
const target = join(here, "..", "..", "crates", "wavesh-policy", "data", "registry.jsonl");
const MAX_BYTES = 3 * 1024 * 1024;

// Argument flag bits.
const BIT = { command: 1, module: 2, variadic: 4, optional: 8, dangerous: 16, file: 32, folder: 64 };

const skipped = { loadSpec: 0, generators: 0 };

function names(value) {
  if (value === undefined) return [];
  return (Array.isArray(value) ? value : [value]).filter((n) => typeof n === "string");
}

function argBits(args) {
  let bits = 0;
  for (const arg of Array.isArray(args) ? args : args ? [args] : []) {
    if (arg.isCommand) bits |= BIT.command;
    if (arg.isModule) bits |= BIT.module;
    if (arg.isVariadic) bits |= BIT.variadic;
    if (arg.isOptional) bits |= BIT.optional;
    if (arg.isDangerous) bits |= BIT.dangerous;
    const templates = names(arg.template);
    if (templates.includes("filepaths")) bits |= BIT.file;
    if (templates.includes("folders")) bits |= BIT.folder;
    if (arg.generators || arg.generateSpec) skipped.generators += 1;
  }
  return bits;
}

function takesArgument(option) {
  const args = Array.isArray(option.args) ? option.args : option.args ? [option.args] : [];
  return args.length > 0 && !args.every((a) => a.isOptional);
}

function node(spec) {
  const out = {};
  const options = [];
  for (const option of spec.options ?? []) {
    for (const name of names(option.name)) options.push(takesArgument(option) ? `${name}=` : name);
  }
  options.sort();
  if (options.length) out.o = [...new Set(options)];
  const bits = argBits(spec.args);
  if (bits) out.a = bits;
  if (spec.generateSpec) skipped.generators += 1;
  const subs = {};
  for (const sub of spec.subcommands ?? []) {
    if (sub.loadSpec && !sub.subcommands && !sub.options) {
      // Not expanded; a link to a root spec of that name is kept (`docker compose` is the
      // `docker-compose` spec).
      skipped.loadSpec += 1;
      const link = typeof sub.loadSpec === "string" ? { l: sub.loadSpec } : {};
      for (const name of names(sub.name)) subs[name] = link;
      continue;
    }
    const child = node(sub);
    for (const name of names(sub.name)) subs[name] = child;
  }
  const keys = Object.keys(subs).sort();
  if (keys.length) out.s = Object.fromEntries(keys.map((k) => [k, subs[k]]));
  return out;
}

function isRoot(entry) {
  return entry.startsWith("@") ? entry.split("/").length === 2 : !entry.includes("/");
}

async function generate() {
  const index = (await import(pathToFileURL(join(buildDir, "index.js")).href)).default;
  const hash = createHash("sha256");
  hash.update(readFileSync(join(pkgDir, "package.json")));
  const lines = [];
  for (const entry of [...index].filter(isRoot).sort()) {
    const file = join(buildDir, `${entry}.js`);
    let spec;
    try {
      spec = (await import(pathToFileURL(file).href)).default;
    } catch {
      continue;
    }
    hash.update(relative(buildDir, file));
    hash.update(readFileSync(file));
    if (typeof spec === "function") {
      skipped.generators += 1;
      continue;
    }
    const specNames = names(spec?.name);
    if (!specNames.length) continue;
    lines.push(JSON.stringify([specNames, node(spec)]));
  }
  lines.sort();
  const rootNames = lines.reduce((n, line) => n + JSON.parse(line)[0].length, 0);
  const header = [
    `# wavesh command registry from @withfig/autocomplete ${JSON.parse(readFileSync(join(pkgDir, "package.json"))).version}`,
    `# sources sha256 ${hash.digest("hex")}`,
    `# roots ${lines.length}, root names ${rootNames}, skipped loadSpec ${skipped.loadSpec}, skipped generators ${skipped.generators}`,
  ];
  const text = header.concat(lines).join("\n") + "\n";
  if (Buffer.byteLength(text) > MAX_BYTES) throw new Error(`registry is ${Buffer.byteLength(text)} bytes, over 3 MiB`);
  return text;
}

const text = await generate();
if (process.argv.includes("--check")) {
  const dir = mkdtempSync(join(tmpdir(), "wavesh-registry-"));
  const fresh = join(dir, "registry.jsonl");
  writeFileSync(fresh, text);
  const same = Buffer.compare(readFileSync(fresh), readFileSync(target)) === 0;
  rmSync(dir, { recursive: true });
  if (!same) {
    console.error(`registry check failed: ${relative(process.cwd(), target)} differs from a fresh build; run node tools/gen-registry/gen.mjs`);
    process.exit(1);
  }
  console.log(`registry check passed (${statSync(target).size} bytes)`);
} else {
  writeFileSync(target, text);
  console.log(text.split("\n").slice(0, 3).join("\n"));
  console.log(`wrote ${relative(process.cwd(), target)} (${Buffer.byteLength(text)} bytes)`);
}
