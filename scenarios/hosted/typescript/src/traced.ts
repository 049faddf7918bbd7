// A chat graph whose model streams its answer and reports its usage, as a provider's model
// does: jetgraph traces the model call into the run's trace (tokens, cost, time to first token).
import type { CallbackManagerForLLMRun } from "@langchain/core/callbacks/manager";
import { BaseChatModel, type LangSmithParams } from "@langchain/core/language_models/chat_models";
import { AIMessage, AIMessageChunk, type BaseMessage } from "@langchain/core/messages";
import { ChatGenerationChunk, type ChatResult } from "@langchain/core/outputs";
import { END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";

const USAGE = { input_tokens: 9, output_tokens: 4, total_tokens: 13 };

// A fake chat model (its answer streamed token by token) reporting what a provider's model
// reports: the call's usage on its last chunk, and the model it stands for (OpenAI's
// gpt-4o-mini, which jetgraph's price table knows).
class MeteredChatModel extends BaseChatModel {
  constructor(private readonly answer: string) {
    super({});
  }

  _llmType(): string {
    return "metered-fake";
  }

  override getLsParams(options: this["ParsedCallOptions"]): LangSmithParams {
    return { ...super.getLsParams(options), ls_provider: "openai", ls_model_name: "gpt-4o-mini" };
  }

  async _generate(messages: BaseMessage[], options: this["ParsedCallOptions"], runManager?: CallbackManagerForLLMRun): Promise<ChatResult> {
    let full: AIMessageChunk | undefined;
    for await (const chunk of this._streamResponseChunks(messages, options, runManager)) {
      full = full === undefined ? (chunk.message as AIMessageChunk) : full.concat(chunk.message as AIMessageChunk);
    }
    const content = String(full?.content ?? "");
    return { generations: [{ text: content, message: new AIMessage({ content, usage_metadata: full?.usage_metadata }) }] };
  }

  override async *_streamResponseChunks(
    _messages: BaseMessage[], _options: this["ParsedCallOptions"], runManager?: CallbackManagerForLLMRun,
  ): AsyncGenerator<ChatGenerationChunk> {
    const tokens = this.answer.split(/(\s)/);
    for (const [i, token] of tokens.entries()) {
      const last = i === tokens.length - 1;
      const chunk = new ChatGenerationChunk({
        text: token,
        message: new AIMessageChunk({ content: token, usage_metadata: last ? USAGE : undefined }),
      });
      yield chunk;
      await runManager?.handleLLMNewToken(token, undefined, undefined, undefined, undefined, { chunk });
    }
  }
}

export const graph = new StateGraph(MessagesAnnotation)
  .addNode("chat", async (state: typeof MessagesAnnotation.State) => ({
    messages: [await new MeteredChatModel("hello there friend").invoke(state.messages)],
  }))
  .addEdge(START, "chat")
  .addEdge("chat", END)
  .compile();
