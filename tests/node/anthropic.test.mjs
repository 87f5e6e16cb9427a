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
