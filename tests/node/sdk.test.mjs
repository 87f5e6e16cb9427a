// Node SDK compatibility: the official `openai` package against a running mockserver.
// Started by tests/test_node_sdk.py with OPENAI_BASE_URL and OPENAI_API_KEY set.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import OpenAI from 'openai';

const client = new OpenAI({ maxRetries: 0 });
const MODEL = 'gpt-5.6-sol';
const WEATHER = {
  type: 'function',
  name: 'get_weather',
  parameters: {
    type: 'object',
    properties: { city: { type: 'string' }, unit: { type: 'string', enum: ['celsius', 'fahrenheit'] } },
    required: ['city', 'unit'],
    additionalProperties: false,
  },
  strict: true,
};

test('responses.create returns a completed response with output_text', async () => {
  const response = await client.responses.create({ model: MODEL, input: 'Hello', reasoning: { effort: 'low' } });
  assert.equal(response.object, 'response');
  assert.equal(response.status, 'completed');
  assert.equal(response.service_tier, 'default');
  assert.deepEqual(response.output.map((o) => o.type), ['reasoning', 'message']);
  assert.ok(response.output_text.length > 0);
  assert.equal(response.usage.output_tokens_details.reasoning_tokens, 64);
  assert.match(response._request_id, /^req_/);
});

test('raw stream: typed events with rising sequence numbers, same text as create', async () => {
  const body = { model: MODEL, input: 'Tell me a story', seed: 5 };
  const plain = await client.responses.create(body);
  const stream = await client.responses.create({ ...body, stream: true });
  const events = [];
  for await (const event of stream) events.push(event);
  assert.equal(events[0].type, 'response.created');
  assert.equal(events.at(-1).type, 'response.completed');
  assert.deepEqual(events.map((e) => e.sequence_number), events.map((_, i) => i));
  const text = events.filter((e) => e.type === 'response.output_text.delta').map((e) => e.delta).join('');
  assert.equal(text, plain.output_text);
});

test('responses.stream() + finalResponse() with a reasoning summary', async () => {
  const body = { model: MODEL, input: 'Think first', reasoning: { effort: 'low', summary: 'auto' }, seed: 6 };
  const plain = await client.responses.create(body);
  const stream = client.responses.stream(body);
  let deltas = '';
  let summary = '';
  stream.on('response.output_text.delta', (e) => { deltas += e.delta; });
  stream.on('response.reasoning_summary_text.delta', (e) => { summary += e.delta; });
  const final = await stream.finalResponse();
  assert.equal(final.status, 'completed');
  assert.equal(final.output_text, plain.output_text);
  assert.equal(deltas, plain.output_text);
  assert.equal(summary, plain.output[0].summary[0].text);
  assert.deepEqual(final.usage, plain.usage);
});

test('function-call stream accumulates the arguments', async () => {
  const stream = client.responses.stream({ model: MODEL, input: 'Weather in Paris?', tools: [WEATHER] });
  let added;
  stream.on('response.output_item.added', (e) => { added ??= e.item; });
  const final = await stream.finalResponse();
  assert.equal(added.type, 'function_call');
  assert.equal(added.arguments, '');
  const [call] = final.output;
  assert.equal(call.type, 'function_call');
  assert.equal(call.name, 'get_weather');
  const args = JSON.parse(call.arguments);
  assert.equal(typeof args.city, 'string');
  assert.ok(['celsius', 'fahrenheit'].includes(args.unit));
});

test('chat.completions.stream() + finalChatCompletion(), text and tool call', async () => {
  const messages = [{ role: 'user', content: 'Hello' }];
  const text = client.chat.completions.stream({ model: MODEL, messages, seed: 7 });
  const completion = await text.finalChatCompletion();
  const plain = await client.chat.completions.create({ model: MODEL, messages, seed: 7 });
  assert.equal(completion.choices[0].message.content, plain.choices[0].message.content);
  assert.equal(completion.choices[0].finish_reason, 'stop');

  const tools = [{ type: 'function', function: { name: WEATHER.name, parameters: WEATHER.parameters } }];
  const calls = client.chat.completions.stream({ model: MODEL, messages, tools, tool_choice: 'required' });
  const final = await calls.finalChatCompletion();
  assert.equal(final.choices[0].finish_reason, 'tool_calls');
  const [call] = final.choices[0].message.tool_calls;
  assert.equal(call.function.name, 'get_weather');
  assert.ok(JSON.parse(call.function.arguments).city);
});

test('stored responses: retrieve, chain, delete, and a 404 in OpenAI shape', async () => {
  const first = await client.responses.create({ model: MODEL, input: 'My name is Ada.' });
  const fetched = await client.responses.retrieve(first.id);
  assert.equal(fetched.id, first.id);
  const second = await client.responses.create({ model: MODEL, input: 'Name?', previous_response_id: first.id });
  assert.equal(second.previous_response_id, first.id);
  await client.responses.delete(first.id);
  await assert.rejects(client.responses.retrieve(first.id), (err) => {
    assert.ok(err instanceof OpenAI.NotFoundError);
    assert.equal(err.status, 404);
    return true;
  });
});

test('access denied: ultrafast without preview is 403', async () => {
  const standard = new OpenAI({ apiKey: 'sk-mock-standard', maxRetries: 0 });
  await assert.rejects(
    standard.responses.create({ model: MODEL, input: 'Hi', service_tier: 'ultrafast' }),
    (err) => err instanceof OpenAI.PermissionDeniedError && err.param === 'service_tier',
  );
});

test('responses.inputItems.list pages the input, newest first', async () => {
  const input = [
    { role: 'developer', content: 'Be brief.' },
    { role: 'user', content: 'Hello' },
    { id: 'msg_mine', type: 'message', role: 'user', content: 'Again' },
  ];
  const response = await client.responses.create({ model: MODEL, input });
  const page = await client.responses.inputItems.list(response.id, { limit: 2 });
  assert.equal(page.data[0].id, 'msg_mine');
  assert.equal(page.has_more, true);
  const ids = [];
  for await (const item of client.responses.inputItems.list(response.id, { limit: 2 })) ids.push(item.id);
  assert.equal(ids.length, 3);
  assert.equal(ids[0], 'msg_mine');
});

test('responses.inputTokens.count matches the usage of create', async () => {
  const body = { model: MODEL, input: 'Count me', instructions: 'Be brief.' };
  const counted = await client.responses.inputTokens.count(body);
  const created = await client.responses.create(body);
  assert.equal(counted.object, 'response.input_tokens');
  assert.equal(counted.input_tokens, created.usage.input_tokens);
});

test('responses.cancel: background responses only', async () => {
  const background = await client.responses.create({ model: MODEL, input: 'Hello', background: true });
  assert.equal(background.background, true);
  const polled = await client.responses.retrieve(background.id);
  assert.ok(['queued', 'in_progress', 'completed'].includes(polled.status));
  const sync = await client.responses.create({ model: MODEL, input: 'Hello' });
  await assert.rejects(client.responses.cancel(sync.id), (err) => {
    assert.ok(err instanceof OpenAI.BadRequestError);
    assert.match(err.message, /Cannot cancel a synchronous response\./);
    return true;
  });
});

test('parallel tool calls: finalChatCompletion and the Responses stream accumulate every call', async () => {
  const time = { type: 'function', name: 'get_time', parameters: { type: 'object', properties: { zone: { type: 'string' } } } };
  const tools = [WEATHER, time].map((t) => ({ type: 'function', function: { name: t.name, parameters: t.parameters } }));
  const messages = [{ role: 'user', content: 'Weather and time in Paris?' }];
  // The fixture makes a quarter of tool replies parallel; the seed fixes which, so find one.
  let seed = 0;
  let plain;
  for (; seed < 40; seed += 1) {
    plain = await client.chat.completions.create({ model: MODEL, messages, tools, seed });
    if (plain.choices[0].message.tool_calls.length > 1) break;
  }
  const expected = plain.choices[0].message.tool_calls;
  assert.ok(expected.length > 1, 'a parallel reply within 40 seeds');
  const final = await client.chat.completions.stream({ model: MODEL, messages, tools, seed }).finalChatCompletion();
  const calls = final.choices[0].message.tool_calls;
  assert.deepEqual(calls.map((c) => [c.function.name, c.function.arguments]), expected.map((c) => [c.function.name, c.function.arguments]));
  assert.equal(new Set(calls.map((c) => c.id)).size, calls.length);
  const response = await client.responses.stream({ model: MODEL, input: 'Paris?', tools: [WEATHER, time], seed, parallel_tool_calls: true }).finalResponse();
  for (const item of response.output.filter((i) => i.type === 'function_call')) {
    assert.ok(JSON.parse(item.arguments));
  }
});

test('prompt caching: the second long request reports cached tokens, in the stream helpers too', async () => {
  const policy = 'Node policy: economy under six hours, business above, receipts within a week. '.repeat(90);
  const messages = [{ role: 'system', content: policy }, { role: 'user', content: 'Can I fly business?' }];
  const first = await client.chat.completions.create({ model: MODEL, messages });
  assert.equal(first.usage.prompt_tokens_details.cached_tokens, 0);
  const chat = await client.chat.completions
    .stream({ model: MODEL, messages, stream_options: { include_usage: true } })
    .finalChatCompletion();
  const cached = chat.usage.prompt_tokens_details.cached_tokens;
  assert.ok(cached >= 1024 && cached % 128 === 0, `cached_tokens ${cached}`);
  const input = { model: MODEL, instructions: policy, input: 'Can I fly business?' };
  const created = await client.responses.create(input);
  assert.equal(created.usage.input_tokens_details.cached_tokens, 0);
  assert.ok(created.usage.input_tokens_details.cache_write_tokens >= 1024);
  const streamed = await client.responses.stream(input).finalResponse();
  assert.ok(streamed.usage.input_tokens_details.cached_tokens >= 1024);
});
