// Node SDK compatibility: the official `@anthropic-ai/sdk` package against a running mockserver
// with the Claude presets. Started by tests/test_node_sdk.py with ANTHROPIC_BASE_URL and
// ANTHROPIC_API_KEY set (and OPENAI_* for the cross-provider fallback).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';

const client = new Anthropic({ maxRetries: 0 });
const MODEL = 'claude-opus-4-8';
const HELLO = [{ role: 'user', content: 'Hello, Claude' }];
const WEATHER = {
  name: 'get_weather',
  description: 'The current weather in a city.',
  input_schema: {
    type: 'object',
    properties: { city: { type: 'string' }, unit: { type: 'string', enum: ['celsius', 'fahrenheit'] } },
    required: ['city', 'unit'],
  },
};

// A message as plain data without the ids, which are new on every request.
function withoutIds(message) {
  const { id, parsed_output: parsed, ...rest } = message; // the stream helper adds parsed_output
  assert.match(id, /^msg_01/);
  return {
    ...rest,
    content: message.content.map(({ id: blockId, parsed_output, ...block }) => block),
  };
}

const CASES = {
  text: { messages: HELLO, max_tokens: 300 },
  'fast mode with a system prompt': { messages: HELLO, max_tokens: 300, system: 'Be brief.', speed: 'fast' },
  'cut by max_tokens': { messages: HELLO, max_tokens: 4 },
  'stop sequence': { messages: HELLO, max_tokens: 300, stop_sequences: ['.'] },
  thinking: { messages: HELLO, max_tokens: 1300, thinking: { type: 'enabled', budget_tokens: 1024 } },
  'tool use': { messages: HELLO, max_tokens: 300, tools: [WEATHER], tool_choice: { type: 'any' } },
};

for (const [name, body] of Object.entries(CASES)) {
  test(`messages.stream rebuilds the non-streamed message: ${name}`, async () => {
    const params = { model: MODEL, ...body };
    const whole = await client.messages.create(params);
    const stream = client.messages.stream(params);
    let text = '';
    stream.on('text', (delta) => {
      text += delta;
    });
    const final = await stream.finalMessage();
    assert.deepEqual(withoutIds(final), withoutIds(whole));
    const wholeText = whole.content.filter((b) => b.type === 'text').map((b) => b.text).join('');
    assert.equal(text, wholeText);
    assert.ok(whole.usage.output_tokens > 0);
  });
}

test('a tool use round trip ends in text', async () => {
  const ask = [{ role: 'user', content: "What's the weather in Paris?" }];
  const first = await client.messages.create({ model: MODEL, max_tokens: 300, messages: ask, tools: [WEATHER] });
  assert.equal(first.stop_reason, 'tool_use');
  const call = first.content.at(-1);
  assert.equal(call.type, 'tool_use');
  assert.deepEqual(Object.keys(call.input).sort(), ['city', 'unit']);
  const answer = await client.messages
    .stream({
      model: MODEL,
      max_tokens: 300,
      tools: [WEATHER],
      messages: [
        ...ask,
        { role: 'assistant', content: first.content },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: call.id, content: '18 degrees' }] },
      ],
    })
    .finalMessage();
  assert.equal(answer.stop_reason, 'end_turn');
  assert.deepEqual(answer.content.map((b) => b.type), ['text']);
});

test('errors: classes, body shape and a mid-stream error event', async () => {
  await assert.rejects(client.messages.create({ model: 'claude-nope', max_tokens: 5, messages: HELLO }), (err) => {
    assert.ok(err instanceof Anthropic.NotFoundError);
    assert.deepEqual(err.error.error, { type: 'not_found_error', message: 'model: claude-nope' });
    return true;
  });
  await assert.rejects(
    client.messages.create(
      { model: MODEL, max_tokens: 5, messages: HELLO },
      { headers: { 'x-mock-fault': 'status=529' } },
    ),
    (err) => err instanceof Anthropic.InternalServerError && err.status === 529,
  );
  await assert.rejects(
    client.messages.create(
      { model: MODEL, max_tokens: 5, messages: HELLO },
      { headers: { 'x-mock-fault': 'status=429' } },
    ),
    (err) => err instanceof Anthropic.RateLimitError && err.headers.get('retry-after') === '1',
  );
  const stream = client.messages.stream(
    { model: MODEL, max_tokens: 100, messages: HELLO },
    { headers: { 'x-mock-fault': 'error_event_after=2;code=server_is_overloaded' } },
  );
  await assert.rejects(stream.finalMessage(), (err) => {
    assert.ok(err instanceof Anthropic.APIError);
    assert.equal(err.error.error.type, 'overloaded_error');
    return true;
  });
});

test('a retried 529 succeeds', async () => {
  const retrying = new Anthropic({ maxRetries: 2 });
  const message = await retrying.messages.create(
    { model: MODEL, max_tokens: 5, messages: HELLO },
    { headers: { 'x-mock-fault': 'once status=529', 'x-mock-test-id': 'node-retry-529' } },
  );
  assert.equal(message.type, 'message');
});

test('fallback: Ultrafast is at capacity (429), Claude Opus 4.8 Fast answers on the Anthropic API', async () => {
  const openai = new OpenAI({ maxRetries: 0 });
  const prompt = 'Summarise the release notes.';
  let answer;
  try {
    const reply = await openai.chat.completions.create(
      { model: 'gpt-5.6-sol', service_tier: 'ultrafast', messages: [{ role: 'user', content: prompt }] },
      { headers: { 'x-mock-fault': 'status=429;code=capacity' } }, // the capacity 429, on demand
    );
    answer = reply.choices[0].message.content;
  } catch (err) {
    assert.ok(err instanceof OpenAI.RateLimitError);
    assert.equal(err.param, 'service_tier');
    const message = await client.messages.create({
      model: MODEL,
      speed: 'fast',
      max_tokens: 400,
      messages: [{ role: 'user', content: prompt }],
    });
    assert.equal(message.usage.speed, 'fast');
    answer = message.content[0].text;
  }
  assert.ok(answer.length > 0);
});

test('prompt caching: a cache_control breakpoint is written, then read by the stream helper', async () => {
  const contract = 'Node clause: the supplier delivers within ten working days of the order. '.repeat(100);
  const request = {
    model: MODEL,
    max_tokens: 32,
    system: [{ type: 'text', text: contract, cache_control: { type: 'ephemeral' } }],
    messages: [{ role: 'user', content: 'When does the supplier deliver?' }],
  };
  const first = await client.messages.create(request);
  assert.ok(first.usage.cache_creation_input_tokens >= 1024);
  assert.equal(first.usage.cache_read_input_tokens, 0);
  const second = await client.messages.stream(request).finalMessage();
  assert.equal(second.usage.cache_read_input_tokens, first.usage.cache_creation_input_tokens);
  assert.equal(second.usage.cache_creation_input_tokens, 0);
});

// Server tools, today's blocks and the pause of a long server-tool turn: the stream helper rebuilds
// the same message (ids and times aside), whose blocks the SDK reads.
const SERVER_TOOLS = {
  'web search with citations': {
    messages: [{ role: 'user', content: 'Search for "tides in Brest" and sum up.' }],
    tools: [{ type: 'web_search_20250305', name: 'web_search' }],
  },
  'code execution': {
    messages: [{ role: 'user', content: 'Calculate 3 * 12390 with code.' }],
    tools: [{ type: 'code_execution_20250825', name: 'code_execution' }],
  },
  'tool search': {
    messages: [{ role: 'user', content: 'What is the exchange rate from USD to EUR?' }],
    tools: [
      { type: 'tool_search_tool_bm25_20251119', name: 'tool_search_tool_bm25' },
      { ...WEATHER, name: 'get_exchange_rate', description: 'Currency exchange rates.', defer_loading: true },
    ],
  },
  'redacted thinking': {
    messages: [{ role: 'user', content: 'ANTHROPIC_MAGIC_STRING_TRIGGER_REDACTED_THINKING_46C9A13E193C177646C7398A98432ECC' }],
    thinking: { type: 'enabled', budget_tokens: 1024 },
  },
};

function comparable(message) {
  const text = JSON.stringify(withoutIds(message));
  return JSON.parse(
    text.replace(/(srvtoolu|toolu|container)_01[1C]?[A-Za-z0-9]+/g, '$1_').replace(/"\d{4}-\d\d-\d\dT[^"]+"/g, '"time"'),
  );
}

for (const [name, body] of Object.entries(SERVER_TOOLS)) {
  test(`messages.stream rebuilds the non-streamed message: ${name}`, async () => {
    const params = { model: MODEL, max_tokens: 1500, ...body };
    const whole = await client.messages.create(params);
    const final = await client.messages.stream(params).finalMessage();
    assert.deepEqual(comparable(final), comparable(whole));
    assert.ok(whole.usage.inference_geo && whole.usage.output_tokens_details);
  });
}

test('a paused server-tool turn continues when it is sent back', async () => {
  const queries = Array.from({ length: 11 }, (_, n) => `"topic ${n}"`).join(' ');
  const ask = [{ role: 'user', content: `Search: ${queries}` }];
  const tools = [{ type: 'web_search_20250305', name: 'web_search' }];
  const paused = await client.messages.create({ model: MODEL, max_tokens: 600, messages: ask, tools });
  assert.equal(paused.stop_reason, 'pause_turn');
  assert.equal(paused.usage.server_tool_use.web_search_requests, 10);
  const back = [...ask, { role: 'assistant', content: paused.content }];
  const resumed = await client.messages.stream({ model: MODEL, max_tokens: 600, messages: back, tools }).finalMessage();
  assert.equal(resumed.stop_reason, 'end_turn');
  assert.equal(resumed.usage.server_tool_use.web_search_requests, 1);
});

test('compaction comes with the beta client', async () => {
  const long = 'The quick brown fox jumps over the lazy dog. '.repeat(400);
  const params = {
    model: MODEL,
    max_tokens: 300,
    messages: [{ role: 'user', content: `${long}Say hi.` }],
    context_management: { edits: [{ type: 'compact_20260112', trigger: { type: 'input_tokens', value: 2000 } }] },
  };
  const whole = await client.beta.messages.create(params);
  const final = await client.beta.messages.stream(params).finalMessage();
  assert.deepEqual(whole.content.map((b) => b.type), ['compaction', 'text']);
  assert.equal(final.content[0].content, whole.content[0].content);
  assert.deepEqual(final.usage.iterations.map((i) => i.type), ['compaction', 'message']);
});
