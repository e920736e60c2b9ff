// A scripted model server on 127.0.0.1 for the real coding-agent CLIs.
// It speaks the two APIs the CLIs call, both streaming:
//   POST /v1/messages    Anthropic Messages API, SSE (Claude Code)
//   POST /v1/responses   OpenAI Responses API, SSE (Codex)
// and logs every request it receives, one JSON line each, with what it
// answered (status, usage), so a test can compare the ledger with the spend.
//
//   node server.mjs --script PLAN.json --log REQUESTS.jsonl --port-file PORT [--bodies DIR]
//
// PLAN.json (read again on every request, so a test may rewrite it):
//   { "experiments": { "2": [TURN, ...], ... },  the conversation per experiment
//     "default": [TURN, ...],                     experiments not listed
//     "subagents": { "MARKER": [TURN, ...] },     conversations whose prompt has MARKER
//     "side": TURN }                              any other request (titles, probes)
// The experiment is read from the prompt's title ("# ratchet: experiment #N");
// requests of the same CLI session (its session header) that do not carry
// the prompt (a sub-agent, a side call) are logged under that experiment.
// Turn k answers the request that already holds k answers of the model.
// A TURN is one of
//   {"text": "..."}                               a final message
//   {"tool": NAME, "input": {...}}                a tool call (Anthropic tool_use,
//                                                 Responses function_call)
//   {"custom": NAME, "input": "..."}              a Responses custom tool call (apply_patch)
//   {"error": 529, "message": "..."}              an HTTP error with the API's error body
//   {"hang": true}                                no answer at all, the socket held open
// plus, on any of them, "usage": {"input": N, "output": N, "cache_read": N,
// "cache_write": N} (the tokens reported; defaults below) and "fail_first":
// [TURN, ...] (answers to the first attempts at this step, e.g. a 500 that the
// CLI retries, or {"drop": true}: the stream cut before it completes).
import fs from 'node:fs';
import http from 'node:http';

const args = {};
for (let i = 2; i < process.argv.length; i += 2) args[process.argv[i].replace(/^--/, '')] = process.argv[i + 1];
const log = fs.openSync(args.log, 'a');
const sessions = new Map();  // session id -> experiment number
const attempts = new Map();  // "session/conversation/step" -> attempts so far
let seq = 0;

function readPlan() {
  try {
    return JSON.parse(fs.readFileSync(args.script, 'utf8'));
  } catch {
    return {};
  }
}

function record(entry) {
  fs.writeSync(log, JSON.stringify(entry) + '\n');
}

const DEFAULT_USAGE = {input: 1000, output: 50, cache_read: 0, cache_write: 0};

// ---- what the CLI sent -------------------------------------------------------

// The user's own message: the text of the first user message that is not one
// of the CLI's <system-reminder> blocks (Claude Code) or its environment
// context (Codex).
function anthropicPrompt(body) {
  const first = (body.messages || []).find((m) => m.role === 'user');
  if (!first) return '';
  if (typeof first.content === 'string') return first.content;
  const texts = first.content.filter((c) => c.type === 'text' && !c.text.startsWith('<system-reminder>'));
  return texts.length ? texts[texts.length - 1].text : '';
}

function responsesPrompt(body) {
  const users = (body.input || []).filter((m) => m.type === 'message' && m.role === 'user');
  for (let i = users.length - 1; i >= 0; --i) {
    const parts = (users[i].content || []).filter((c) => c.type === 'input_text');
    const texts = parts.map((c) => c.text).filter((t) => !t.startsWith('<environment_context>'));
    if (texts.length) return texts[0];
  }
  return '';
}

// The tool results the CLI sent back, newest last (to see what a refused or
// failed tool call returned).
function anthropicToolResults(body) {
  const out = [];
  for (const m of body.messages || [])
    if (m.role === 'user' && Array.isArray(m.content))
      for (const c of m.content)
        if (c.type === 'tool_result') {
          const text = typeof c.content === 'string' ? c.content
            : (c.content || []).map((x) => x.text || '').join('');
          out.push({id: c.tool_use_id, is_error: !!c.is_error, text});
        }
  return out;
}

function responsesToolResults(body) {
  return (body.input || []).filter((m) => /_call_output$/.test(m.type))
    .map((m) => ({id: m.call_id, text: typeof m.output === 'string' ? m.output : JSON.stringify(m.output)}));
}

function conversationOf(prompt, plan) {
  const title = /^# ratchet: experiment #(\d+)/m.exec(prompt);
  if (title) return {kind: 'main', experiment: Number(title[1])};
  for (const marker of Object.keys(plan.subagents || {}))
    if (prompt.includes(marker)) return {kind: 'subagent', marker};
  return {kind: 'side'};
}

function turnsFor(conv, plan) {
  if (conv.kind === 'main') return (plan.experiments || {})[String(conv.experiment)] || plan.default || [];
  if (conv.kind === 'subagent') return plan.subagents[conv.marker];
  return null;
}

// ---- answers -----------------------------------------------------------------

function usageOf(turn) {
  return {...DEFAULT_USAGE, ...(turn.usage || {})};
}

function sse(res, event, data) {
  res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
}

const ANTHROPIC_ERRORS = {400: 'invalid_request_error', 401: 'authentication_error', 403: 'permission_error',
  404: 'not_found_error', 413: 'request_too_large', 429: 'rate_limit_error', 500: 'api_error', 529: 'overloaded_error'};

function anthropicAnswer(res, body, turn, id) {
  if (turn.error) {
    const type = ANTHROPIC_ERRORS[turn.error] || 'api_error';
    const headers = {'content-type': 'application/json', 'request-id': 'req_' + id};
    if (turn.error === 429) headers['retry-after'] = '0';
    res.writeHead(turn.error, headers);
    res.end(JSON.stringify({type: 'error', error: {type, message: turn.message || type}}));
    return null;
  }
  const u = usageOf(turn);
  res.writeHead(200, {'content-type': 'text/event-stream', 'request-id': 'req_' + id});
  sse(res, 'message_start', {type: 'message_start', message: {id: 'msg_' + id, type: 'message', role: 'assistant',
    model: body.model, content: [], stop_reason: null, stop_sequence: null,
    usage: {input_tokens: u.input, cache_creation_input_tokens: u.cache_write, cache_read_input_tokens: u.cache_read,
      output_tokens: 1}}});
  let stop = 'end_turn';
  if (turn.tool) {
    stop = 'tool_use';
    sse(res, 'content_block_start', {type: 'content_block_start', index: 0,
      content_block: {type: 'tool_use', id: 'toolu_' + id, name: turn.tool, input: {}}});
    sse(res, 'content_block_delta', {type: 'content_block_delta', index: 0,
      delta: {type: 'input_json_delta', partial_json: JSON.stringify(turn.input || {})}});
  } else {
    sse(res, 'content_block_start', {type: 'content_block_start', index: 0, content_block: {type: 'text', text: ''}});
    sse(res, 'content_block_delta', {type: 'content_block_delta', index: 0,
      delta: {type: 'text_delta', text: turn.text || ''}});
  }
  if (turn.drop) {  // cut the stream before the message completes
    res.destroy();
    return null;
  }
  sse(res, 'content_block_stop', {type: 'content_block_stop', index: 0});
  sse(res, 'message_delta', {type: 'message_delta', delta: {stop_reason: stop, stop_sequence: null},
    usage: {input_tokens: u.input, cache_creation_input_tokens: u.cache_write, cache_read_input_tokens: u.cache_read,
      output_tokens: u.output}});
  sse(res, 'message_stop', {type: 'message_stop'});
  res.end();
  return u;
}

function responsesAnswer(res, body, turn, id) {
  if (turn.error) {
    const headers = {'content-type': 'application/json', 'x-request-id': 'req_' + id};
    if (turn.error === 429) headers['retry-after'] = '0';
    res.writeHead(turn.error, headers);
    const type = turn.error === 401 ? 'invalid_request_error' : turn.error === 429 ? 'rate_limit_exceeded' : 'server_error';
    res.end(JSON.stringify({error: {message: turn.message || type, type, code: turn.code || null, param: null}}));
    return null;
  }
  const u = usageOf(turn);
  const rid = 'resp_' + id;
  res.writeHead(200, {'content-type': 'text/event-stream', 'x-request-id': 'req_' + id});
  sse(res, 'response.created', {type: 'response.created', response: {id: rid, status: 'in_progress', output: []}});
  let item;
  if (turn.custom)
    item = {type: 'custom_tool_call', id: 'ctc_' + id, call_id: 'call_' + id, name: turn.custom, input: turn.input || '', status: 'completed'};
  else if (turn.tool)
    item = {type: 'function_call', id: 'fc_' + id, call_id: 'call_' + id, name: turn.tool,
      arguments: JSON.stringify(turn.input || {}), status: 'completed'};
  else
    item = {type: 'message', id: 'msg_' + id, role: 'assistant', status: 'completed',
      content: [{type: 'output_text', text: turn.text || '', annotations: []}]};
  sse(res, 'response.output_item.added', {type: 'response.output_item.added', output_index: 0, item: {...item, status: 'in_progress'}});
  if (turn.drop) {
    res.destroy();
    return null;
  }
  sse(res, 'response.output_item.done', {type: 'response.output_item.done', output_index: 0, item});
  sse(res, 'response.completed', {type: 'response.completed', response: {id: rid, status: 'completed', output: [item],
    usage: {input_tokens: u.input + u.cache_read, input_tokens_details: {cached_tokens: u.cache_read},
      output_tokens: u.output, output_tokens_details: {reasoning_tokens: 0}, total_tokens: u.input + u.cache_read + u.output}}});
  res.end();
  return u;
}

// ---- the server ----------------------------------------------------------------

function handle(req, res, raw) {
  const id = ++seq;
  const entry = {seq: id, time: Date.now() / 1000, method: req.method, url: req.url};
  let body = null;
  try {
    body = raw ? JSON.parse(raw) : null;
  } catch {
    entry.body_text = raw.slice(0, 2000);
  }
  if (args.bodies) fs.writeFileSync(`${args.bodies}/${id}.json`, raw);  // for debugging a CLI
  const path = req.url.split('?')[0];
  const api = path.endsWith('/messages') ? 'anthropic' : path.endsWith('/responses') ? 'responses' : null;
  if (req.method !== 'POST' || !api || !body) {
    if (req.headers.upgrade) {
      // Codex tries a websocket to the Responses API first: refuse, so
      // that it falls back to HTTP at once.
      res.writeHead(426, {'content-type': 'application/json'});
      res.end(JSON.stringify({error: {message: 'no websockets here', type: 'upgrade_required'}}));
    } else if (path.endsWith('/count_tokens')) {
      res.writeHead(200, {'content-type': 'application/json'});
      res.end(JSON.stringify({input_tokens: 100}));
    } else {
      res.writeHead(req.method === 'HEAD' || req.method === 'GET' ? 200 : 404, {'content-type': 'application/json'});
      res.end(req.method === 'HEAD' ? undefined : '{}');
    }
    entry.status = res.statusCode;
    record(entry);
    return;
  }
  const plan = readPlan();
  const session = req.headers['x-claude-code-session-id'] || req.headers['session-id'] || req.headers['session_id'] || '';
  const prompt = api === 'anthropic' ? anthropicPrompt(body) : responsesPrompt(body);
  const conv = conversationOf(prompt, plan);
  if (conv.kind === 'main' && session) sessions.set(session, conv.experiment);
  const step = api === 'anthropic'
    ? (body.messages || []).filter((m) => m.role === 'assistant').length
    : (body.input || []).filter((m) => m.type === 'function_call' || m.type === 'custom_tool_call' ||
      (m.type === 'message' && m.role === 'assistant')).length;
  const turns = turnsFor(conv, plan);
  let turn = turns ? turns[Math.min(step, turns.length - 1)] || {text: 'DESCRIPTION: nothing planned'}
    : plan.side || {text: 'ok', usage: {input: 10, output: 2}};
  if (turns && step >= turns.length) turn = {text: 'DESCRIPTION: the plan ran out'};
  const key = `${session}/${conv.kind}/${conv.marker || ''}/${step}`;
  const attempt = attempts.get(key) || 0;
  attempts.set(key, attempt + 1);
  if (turn.fail_first && attempt < turn.fail_first.length) turn = turn.fail_first[attempt];

  // The credential the CLI sent (test keys only), to show where it came from.
  entry.auth = req.headers['x-api-key'] || req.headers.authorization || '';
  // A CLI without a session header (opencode) sends the whole conversation,
  // prompt included, every time.
  const experiment = sessions.get(session) ?? (conv.kind === 'main' ? conv.experiment : null);
  Object.assign(entry, {api, model: body.model, session, kind: conv.kind, experiment,
    marker: conv.marker, step, attempt, tools: (body.tools || []).map((t) => t.name || t.type)});
  if (step === 0 && attempt === 0) entry.prompt = prompt;
  entry.tool_results = api === 'anthropic' ? anthropicToolResults(body) : responsesToolResults(body);
  entry.answer = turn.hang ? 'hang' : turn.error ? 'error' : turn.drop ? 'drop' : turn.tool || turn.custom ? 'tool' : 'text';
  if (turn.tool || turn.custom) entry.tool = turn.tool || turn.custom;
  if (turn.hang) {
    entry.status = 0;
    record(entry);
    req.socket.on('close', () => record({seq: id, closed: Date.now() / 1000}));
    return;  // the CLI waits until it gives up or is killed
  }
  const usage = api === 'anthropic' ? anthropicAnswer(res, body, turn, id) : responsesAnswer(res, body, turn, id);
  entry.status = turn.error || (turn.drop ? 0 : 200);
  if (usage) entry.usage = usage;
  record(entry);
}

const server = http.createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => handle(req, res, Buffer.concat(chunks).toString('utf8')));
});
server.keepAliveTimeout = 60000;
server.listen(Number(args.port || 0), '127.0.0.1', () => {
  const port = server.address().port;
  if (args['port-file']) {
    fs.writeFileSync(args['port-file'] + '.tmp', String(port));
    fs.renameSync(args['port-file'] + '.tmp', args['port-file']);
  } else {
    console.log(port);
  }
});
process.on('SIGTERM', () => process.exit(0));
