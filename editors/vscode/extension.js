// evaldsl for VS Code: starts `evaldsl lsp` (the language server of the evaldsl Python
// package) over stdio for .eval files and YAML suites. Highlighting needs no code: the
// TextMate grammar in syntaxes/ is registered by package.json.
//
// Plain JavaScript, no build step. The one dependency, vscode-languageclient, comes from
// `npm install` in this folder.
"use strict";

const vscode = require("vscode");
const { LanguageClient, TransportKind } = require("vscode-languageclient/node");

const DEFAULT_COMMAND = ["evaldsl", "lsp"];

/** @type {LanguageClient | undefined} */
let client;
/** @type {vscode.OutputChannel | undefined} */
let output;

/** The server command from `evaldsl.server.command`: [program, ...args]. */
function serverCommand() {
  const folder = vscode.workspace.workspaceFolders && vscode.workspace.workspaceFolders[0];
  let command = vscode.workspace.getConfiguration("evaldsl").get("server.command", DEFAULT_COMMAND);
  if (typeof command === "string") {
    command = command.trim() ? [command] : [];
  }
  if (!Array.isArray(command) || command.length === 0 || command.some((part) => typeof part !== "string")) {
    vscode.window.showWarningMessage(
      'evaldsl: "evaldsl.server.command" must be a list of strings such as ["evaldsl", "lsp"]; using the default.'
    );
    command = DEFAULT_COMMAND;
  }
  return command.map((part) =>
    folder ? part.split("${workspaceFolder}").join(folder.uri.fsPath) : part
  );
}

function createClient() {
  const [program, ...args] = serverCommand();
  const folder = vscode.workspace.workspaceFolders && vscode.workspace.workspaceFolders[0];
  /** @type {import("vscode-languageclient/node").ServerOptions} */
  const serverOptions = {
    command: program,
    args,
    transport: TransportKind.stdio,
    options: folder ? { cwd: folder.uri.fsPath } : {},
  };
  /** @type {import("vscode-languageclient/node").LanguageClientOptions} */
  const clientOptions = {
    documentSelector: [
      { language: "evaldsl" },
      // YAML and JSON suites embed DSL text under `expect:`; the server reports on them
      // too, and tells a suite (`cases` at its top level) from any other YAML or JSON
      { language: "yaml", pattern: "**/*.{yaml,yml}" },
      { language: "json", pattern: "**/*.json" },
    ],
    outputChannel: output,
    traceOutputChannel: output,
  };
  return new LanguageClient("evaldsl", "evaldsl", serverOptions, clientOptions);
}

async function startClient() {
  client = createClient();
  try {
    await client.start();
  } catch (err) {
    const command = serverCommand().join(" ");
    const choice = await vscode.window.showErrorMessage(
      `evaldsl: the language server (\`${command}\`) did not start: ${err && err.message ? err.message : err}. ` +
        "Install it with `pip install 'evaldsl[lsp]'`, or set evaldsl.server.command.",
      "Open Settings"
    );
    if (choice === "Open Settings") {
      vscode.commands.executeCommand("workbench.action.openSettings", "evaldsl.server.command");
    }
  }
}

async function stopClient() {
  const running = client;
  client = undefined;
  if (running) {
    try {
      await running.stop();
    } catch {
      // a server that never started cannot be stopped; nothing to clean up
    }
  }
}

async function restartClient() {
  await stopClient();
  await startClient();
}

/** @param {vscode.ExtensionContext} context */
async function activate(context) {
  output = vscode.window.createOutputChannel("evaldsl");
  context.subscriptions.push(output);
  context.subscriptions.push(vscode.commands.registerCommand("evaldsl.restartServer", restartClient));
  context.subscriptions.push(
    vscode.workspace.onDidChangeConfiguration((event) => {
      if (event.affectsConfiguration("evaldsl.server.command")) {
        restartClient();
      }
    })
  );
  await startClient();
}

function deactivate() {
  return stopClient();
}

module.exports = { activate, deactivate };
