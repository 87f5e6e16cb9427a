// One session with the official Node SDKs, each reply asked for streamed (SHAPE=stream) or not
// (SHAPE=whole), printed as JSON: run by tests/e2e/test_record_replay_node.py, recorded in one shape and
// replayed in the other; the stream helpers' final objects must equal the recorded bodies.
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { WEATHER } from './weather_tool.mjs';

const openai = new OpenAI({ maxRetries: 0 });
const claude = new Anthropic({ maxRetries: 0 });
const streamed = process.env.SHAPE === 'stream';
const MODEL = 'gpt-5.6-sol';
const CLAUDE_WEATHER = {
  name: 'get_weather',
  input_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
};
const SALTY = [{ role: 'user', content: 'Why is the sea salty?' }];

// What the helpers add on their own (parsed output, the joined output_text) is left out.
const shown = (value) => JSON.parse(JSON.stringify(value, (key, v) => (key.startsWith('parsed') || key === 'output_parsed' || key === 'output_text' ? undefined : v)));

const response = (body) => (streamed ? openai.responses.stream(body).finalResponse() : openai.responses.create(body));
const message = (body) => (streamed ? claude.messages.stream(body).finalMessage() : claude.messages.create(body));

const answer = await response({ model: MODEL, input: 'Why is the sea salty?', reasoning: { effort: 'low', summary: 'auto' } });
const call = await response({ model: MODEL, input: 'Weather in Paris?', tools: [WEATHER], tool_choice: 'required' });
const thought = await message({ model: 'claude-opus-4-8', max_tokens: 2048, thinking: { type: 'enabled', budget_tokens: 1024 }, messages: SALTY });
const tool = await message({ model: 'claude-opus-4-8', max_tokens: 400, tools: [CLAUDE_WEATHER], tool_choice: { type: 'any' }, messages: SALTY });

console.log(JSON.stringify(shown({ answer, call, thought, tool })));
