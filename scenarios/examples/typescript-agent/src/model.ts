// The chat model: an offline one that streams its answer token by token and calls the tool.
//
// ScriptedChatModel is a LangChain chat model (a BaseChatModel), so LangGraph streams its tokens
// and reads its tool calls as it would a hosted model's. It understands one kind of question,
// about the weather, in a city it names or in the city the system prompt says the user lives in.
import type { CallbackManagerForLLMRun } from "@langchain/core/callbacks/manager";
import {
  BaseChatModel,
  type BaseChatModelCallOptions,
  type BindToolsInput,
} from "@langchain/core/language_models/chat_models";
import { AIMessageChunk, type BaseMessage, HumanMessage, SystemMessage, ToolMessage } from "@langchain/core/messages";
import { ChatGenerationChunk, type ChatResult } from "@langchain/core/outputs";
import { convertToOpenAITool } from "@langchain/core/utils/function_calling";

const cityAsked = /\bin ([A-Z][\w-]*(?: [A-Z][\w-]*)*)/;
const cityKnown = /lives in ([^.]+)\./;

export interface ScriptedCallOptions extends BaseChatModelCallOptions {
  tools?: BindToolsInput[];
}

/** An offline chat model for the example: no key, the same answers every time. */
export class ScriptedChatModel extends BaseChatModel<ScriptedCallOptions> {
  _llmType(): string {
    return "scripted";
  }

  override bindTools(tools: BindToolsInput[], kwargs?: Partial<ScriptedCallOptions>) {
    return this.withConfig({ ...kwargs, tools });
  }

  async _generate(messages: BaseMessage[], options: this["ParsedCallOptions"]): Promise<ChatResult> {
    let whole: ChatGenerationChunk | undefined;
    for await (const chunk of this._streamResponseChunks(messages, options)) {
      whole = whole ? whole.concat(chunk) : chunk;
    }
    return { generations: whole ? [{ text: whole.text, message: whole.message }] : [] };
  }

  override async *_streamResponseChunks(
    messages: BaseMessage[],
    options: this["ParsedCallOptions"],
    runManager?: CallbackManagerForLLMRun,
  ): AsyncGenerator<ChatGenerationChunk> {
    const tools = new Set((options.tools ?? []).map((t) => convertToOpenAITool(t).function.name));
    const city = cityOf(messages);
    const last = messages.at(-1);
    let text: string;
    if (last instanceof ToolMessage) {
      text = last.status === "error" ? "Alright, I did not look it up." : `In ${city} it is ${last.text}.`;
    } else if (tools.has("get_weather") && city && asksWeather(messages)) {
      const call = { name: "get_weather", args: JSON.stringify({ city }), id: `call_${Math.random().toString(36).slice(2, 14)}`, index: 0 };
      yield new ChatGenerationChunk({ text: "", message: new AIMessageChunk({ content: "", tool_call_chunks: [{ ...call, type: "tool_call_chunk" }] }) });
      return;
    } else if (asksWeather(messages)) {
      text = "Which city? Tell me where you are and I will look it up.";
    } else {
      text = "I can tell you the weather: ask me about it, in a city or where you live.";
    }
    for (const [i, word] of text.split(" ").entries()) {
      const token = i === 0 ? word : ` ${word}`;
      const chunk = new ChatGenerationChunk({ text: token, message: new AIMessageChunk({ content: token }) });
      yield chunk;
      await runManager?.handleLLMNewToken(token, undefined, undefined, undefined, undefined, { chunk });
    }
  }
}

function lastQuestion(messages: BaseMessage[]): string {
  return messages.findLast((m) => m instanceof HumanMessage)?.text ?? "";
}

function asksWeather(messages: BaseMessage[]): boolean {
  return lastQuestion(messages).toLowerCase().includes("weather");
}

/** The city asked about: named in the question, else the one the system prompt knows. */
function cityOf(messages: BaseMessage[]): string | undefined {
  const asked = cityAsked.exec(lastQuestion(messages));
  if (asked) return asked[1];
  for (const m of messages) {
    const known = m instanceof SystemMessage ? cityKnown.exec(m.text) : null;
    if (known) return known[1];
  }
  return undefined;
}

/** The model the agent talks to. For a real one, see the README (@langchain/openai). */
export function makeModel() {
  return new ScriptedChatModel({});
}
