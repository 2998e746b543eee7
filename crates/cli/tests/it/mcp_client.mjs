// `wavesh mcp` through the official TypeScript SDK client (@modelcontextprotocol/sdk),
// over stdio (StdioClientTransport) and Streamable HTTP (StreamableHTTPClientTransport):
// the scenario of mcp_client.py — tools, the working directory, a background task and its
// notification, TaskOutput paging, TaskList, TaskStop, resources and their updates,
// logging, progress and elicitation.
//
// Run by scripts/mcp-conformance.sh, from a directory where the SDK is installed:
//   node mcp_client.mjs WAVESH_BINARY stdio|http [client-budget]
// `client-budget` runs MCP-5 instead: a 75 s command through a client with the SDK's
// default options (a 60 s request timeout) answers with its task id in time.
// Prints what it saw; exits non-zero with a message on the first failure.

import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  ElicitRequestSchema,
  LoggingMessageNotificationSchema,
  ResourceUpdatedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";

const [binary, transportName, scenarioName] = process.argv.slice(2);
const TOKEN = "ts-client-token";

function check(condition, message) {
  if (!condition) {
    console.log(`FAIL (${transportName}): ${message}`);
    process.exit(1);
  }
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function waitFor(predicate, ms) {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (predicate()) return true;
    await sleep(20);
  }
  return predicate();
}

/** Pids of live processes whose command line holds `marker`. */
function livePidsWith(marker) {
  const pids = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const cmdline = readFileSync(`/proc/${name}/cmdline`, "latin1");
      const stat = readFileSync(`/proc/${name}/stat`, "latin1");
      const state = stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3);
      if (cmdline.includes(marker) && state !== "Z" && state !== "X") pids.push(Number(name));
    } catch {
      // The process ended while we looked.
    }
  }
  return pids;
}

const textOf = (result) =>
  result.content.filter((block) => block.type === "text").map((block) => block.text).join("\n");

function environment(workspace) {
  const env = {};
  for (const key of ["PATH", "HOME", "LANG", "TMPDIR"]) if (process.env[key]) env[key] = process.env[key];
  env.XDG_STATE_HOME = join(workspace, ".state");
  return env;
}

/** Starts `wavesh mcp --http 127.0.0.1:0` and resolves with its URL and process. */
function startHttpServer(workspace, extra) {
  return new Promise((resolve, reject) => {
    const server = spawn(binary, ["mcp", "--no-login-env", "--cwd", workspace, "--http", "127.0.0.1:0", ...extra], {
      env: { ...environment(workspace), WAVESH_MCP_TOKEN: TOKEN },
      stdio: ["ignore", "ignore", "pipe"],
    });
    let seen = "";
    server.stderr.on("data", (chunk) => {
      seen += chunk.toString();
      const found = seen.match(/serving Streamable HTTP at (http:\/\/127\.0\.0\.1:\d+\/mcp)/);
      if (found) resolve({ url: new URL(found[1]), server });
    });
    server.on("exit", (code) => reject(new Error(`the server exited (${code}): ${seen}`)));
  });
}

/** A connected client, its transport and a way to end everything. */
async function connect(workspace, extra, handlers) {
  const client = new Client({ name: "wavesh-ts-test", version: "0" }, { capabilities: { elicitation: {} } });
  handlers(client);
  if (transportName === "stdio") {
    const transport = new StdioClientTransport({
      command: binary,
      args: ["mcp", "--no-login-env", "--cwd", workspace, ...extra],
      env: environment(workspace),
      stderr: "ignore",
    });
    await client.connect(transport);
    return { client, end: () => client.close() };
  }
  const { url, server } = await startHttpServer(workspace, extra);
  const transport = new StreamableHTTPClientTransport(url, {
    requestInit: { headers: { Authorization: `Bearer ${TOKEN}` } },
  });
  await client.connect(transport);
  return {
    client,
    end: async () => {
      // DELETE ends the session and everything it started; then the server goes.
      await transport.terminateSession();
      await client.close();
      server.kill("SIGTERM");
    },
  };
}

async function tasksScenario() {
  const workspace = realpathSync(mkdtempSync(join(tmpdir(), "wavesh-ts-")));
  const marker = String(Date.now() % 1e9).padStart(9, "0");
  const logs = [];
  const updates = [];
  const elicitations = [];
  const { client, end } = await connect(workspace, ["--permission-mode", "wavesh"], (client) => {
    client.setNotificationHandler(LoggingMessageNotificationSchema, (note) => logs.push(note.params));
    client.setNotificationHandler(ResourceUpdatedNotificationSchema, (note) => updates.push(note.params.uri));
    client.setRequestHandler(ElicitRequestSchema, (request) => {
      elicitations.push(request.params);
      return { action: "accept", content: { allow: true } };
    });
  });
  try {
    const info = client.getServerCapabilities();
    check(info.resources?.subscribe === true, `subscribe capability: ${JSON.stringify(info)}`);
    const tools = (await client.listTools()).tools;
    const names = tools.map((tool) => tool.name);
    check(JSON.stringify(names) === JSON.stringify(["Bash", "TaskOutput", "TaskInput", "TaskStop", "TaskList"]), `tools: ${names}`);
    const taskOutput = tools.find((tool) => tool.name === "TaskOutput");
    check(!taskOutput.description.includes("DEPRECATED"), `TaskOutput: ${taskOutput.description}`);
    check(taskOutput.inputSchema.properties.offset && taskOutput.inputSchema.properties.limit, "TaskOutput pages");

    const bash = async (args, options) => {
      const result = await client.callTool({ name: "Bash", arguments: args }, undefined, options);
      return { result, text: textOf(result) };
    };

    // CWD-2: cd inside the workspace persists.
    let { text } = await bash({ command: "mkdir -p sub && cd sub" });
    check(text.includes(`Shell working directory changed to ${join(workspace, "sub")}`), `cd sub: ${text}`);
    ({ text } = await bash({ command: "pwd" }));
    check(text.trim() === join(workspace, "sub"), `pwd: ${text}`);
    await bash({ command: `cd ${workspace}` });

    // A background task, subscribed to: its end comes as resources/updated, a log
    // message, and a <task-notification> at the start of the next result.
    let started = await bash({ command: "printf 'line %s\\n' 1 2 3 4 5; sleep 0.3", run_in_background: true });
    const task = started.result.structuredContent.backgroundTaskId;
    check(task, `no task id: ${started.text}`);
    await client.subscribeResource({ uri: `wavesh://tasks/${task}` });
    const long = await bash({ command: `sleep 300.${marker}`, run_in_background: true });
    const longTask = long.result.structuredContent.backgroundTaskId;
    const resources = (await client.listResources()).resources.map((r) => r.uri);
    check(resources.includes(`wavesh://tasks/${longTask}`), `resources: ${resources}`);
    const read = await client.readResource({ uri: `wavesh://tasks/${longTask}` });
    check(read.contents[0].text.includes('"status": "running"'), read.contents[0].text);

    await sleep(1000);
    const next = await bash({ command: "echo next" });
    const blocks = next.result.content.map((block) => block.text);
    check(blocks.length === 2 && blocks[0].startsWith("<task-notification>") && blocks[0].includes(task), `blocks: ${blocks}`);
    check(blocks[1] === "next", blocks[1]);
    check(await waitFor(() => updates.includes(`wavesh://tasks/${task}`) && logs.length >= 1, 3000), `updates ${updates}, logs ${JSON.stringify(logs)}`);

    // MCP-4: TaskOutput pages through the whole output; TaskList lists both tasks.
    let offset = 0;
    let pages = "";
    for (;;) {
      const page = await client.callTool({ name: "TaskOutput", arguments: { task_id: task, offset, limit: 8 } });
      const pageText = textOf(page);
      const body = pageText.split("<output>\n")[1]?.replace(/\n<\/output>$/, "") ?? "";
      pages += body;
      const nextOffset = pageText.match(/<next_offset>(\d+)<\/next_offset>/);
      if (!nextOffset) break;
      offset = Number(nextOffset[1]);
    }
    check(pages === "line 1\nline 2\nline 3\nline 4\nline 5\n", `pages: ${JSON.stringify(pages)}`);
    const listing = textOf(await client.callTool({ name: "TaskList", arguments: {} }));
    check(listing.includes(`${task} completed, exit code 0`) && listing.includes(`${longTask} running`), listing);

    // TaskStop ends the whole tree; its end is not announced (not subscribed).
    const stopped = await client.callTool({ name: "TaskStop", arguments: { task_id: longTask } });
    check(textOf(stopped).startsWith(`Stopped task ${longTask}`), textOf(stopped));
    check(await waitFor(() => livePidsWith(`300.${marker}`).length === 0, 1500), "TaskStop left processes");
    await sleep(300);
    check(!updates.includes(`wavesh://tasks/${longTask}`), `an update nobody subscribed to: ${updates}`);

    // An unknown tool is a protocol error (MCP-2).
    let error = null;
    try {
      await client.callTool({ name: "Nope", arguments: {} });
    } catch (caught) {
      error = caught;
    }
    check(error && error.code === -32602, `unknown tool: ${error}`);

    // EXEC-5: progress after 2 s, once a second.
    const progress = [];
    const slow = await bash({ command: "sleep 3.2; echo slept" }, { onprogress: (p) => progress.push(p) });
    // The task the model stopped itself is not announced again (TaskStop's result said
    // it, OUT): the next result is the command's own output alone.
    check(slow.result.content.at(-1).text === "slept", `slow: ${slow.text}`);
    check(!slow.text.includes(`<task-id>${longTask}</task-id>`), `a notification of the task the model stopped: ${slow.text}`);
    check(progress.length >= 1 && progress[0].progress >= 2, `progress: ${JSON.stringify(progress)}`);

    // RULE-5: a command that needs approval is put to the user; accepted, it runs. The
    // request carries no stray _meta.
    ({ text } = await bash({ command: "touch approved.txt" }));
    const asked = elicitations.find((params) => params.message.includes("touch approved.txt"));
    check(asked, `elicitations: ${JSON.stringify(elicitations)}`);
    for (const params of elicitations) check(params._meta === undefined, `stray _meta: ${JSON.stringify(params._meta)}`);
    check(existsSync(join(workspace, "approved.txt")), `approved command did not run: ${text}`);

    // The end of the session ends a task that still runs.
    await bash({ command: `sleep 301.${marker}`, run_in_background: true });
    check(await waitFor(() => livePidsWith(`301.${marker}`).length > 0, 5000), "last task did not start");
  } finally {
    await end();
  }
  check(await waitFor(() => livePidsWith(`.${marker}`).length === 0, 2000), `processes left: ${livePidsWith(marker)}`);
  rmSync(workspace, { recursive: true, force: true });
  console.log(`typescript client over ${transportName}: ok`);
}

/** MCP-5 at the defaults: `echo started; sleep 75; echo done` through a client with the
 * SDK's default request options answers before the SDK's 60 s timeout, with a task id;
 * progress notifications flow meanwhile; TaskOutput later gives the end. */
async function clientBudgetScenario() {
  const workspace = realpathSync(mkdtempSync(join(tmpdir(), "wavesh-ts-")));
  const { client, end } = await connect(workspace, [], () => {});
  try {
    const progress = [];
    const began = Date.now();
    // No timeout option: the SDK's default (60 s) holds.
    const result = await client.callTool(
      { name: "Bash", arguments: { command: "echo started; sleep 75; echo done" } },
      undefined,
      { onprogress: (note) => progress.push(note) },
    );
    const took = (Date.now() - began) / 1000;
    const task = result.structuredContent?.backgroundTaskId;
    check(task, `no task id after ${took}s: ${textOf(result)}`);
    check(took < 60, `answered after ${took}s`);
    check(textOf(result).includes(`client's wait limit (50s) came and was moved to the background with ID: ${task}`), textOf(result));
    check(progress.length >= 10, `progress notifications: ${progress.length}`);
    console.log(`task ${task} after ${took.toFixed(1)}s with ${progress.length} progress notifications`);
    // The rest (about 25 s) fits in one blocking TaskOutput within the SDK's timeout.
    const output = await client.callTool({ name: "TaskOutput", arguments: { task_id: task, block: true, timeout: 40000 } });
    const text = textOf(output);
    check(text.includes("<status>completed</status>") && text.includes("started\ndone"), text);
  } finally {
    await end();
  }
  rmSync(workspace, { recursive: true, force: true });
  console.log(`typescript client budget over ${transportName}: ok`);
}

if (scenarioName === "client-budget") {
  await clientBudgetScenario();
} else {
  await tasksScenario();
}
process.exit(0);
