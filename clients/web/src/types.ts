// Loose shapes of what the daemon sends (the generated types leave content blocks opaque).

export interface TextBlock {
  type: "text";
  text: string;
}
export interface ThinkingBlock {
  type: "thinking";
  thinking: string;
  redacted?: boolean;
}
export interface ToolCallBlock {
  type: "toolCall";
  id: string;
  name: string;
  arguments: unknown;
  /** Raw JSON while streaming. */
  partialJson?: string;
}
export interface ImageBlock {
  type: "image";
  data: string;
  mimeType: string;
}
export type Block = TextBlock | ThinkingBlock | ToolCallBlock | ImageBlock;

export interface Msg {
  role: string;
  content?: Block[] | string;
  timestamp?: number;
  // assistant
  stopReason?: string;
  errorMessage?: string | null;
  provider?: string;
  model?: string;
  usage?: { totalTokens?: number; cost?: { total?: number } };
  // toolResult
  toolCallId?: string;
  toolName?: string;
  isError?: boolean;
  details?: Record<string, unknown>;
  // bashExecution
  command?: string;
  output?: string;
  exitCode?: number | null;
  cancelled?: boolean;
  // custom
  customType?: string;
  display?: boolean;
  // summaries
  summary?: string;
  tokensBefore?: number;
}

export interface Entry {
  type: string;
  id: string;
  parentId?: string | null;
  timestamp?: string;
  message?: Msg;
  [key: string]: unknown;
}

export interface ToolResultLike {
  content?: Block[];
  details?: Record<string, unknown>;
}

/** A tool call's execution, live or from its stored result. */
export interface ToolState {
  toolCallId: string;
  toolName: string;
  args?: unknown;
  result?: ToolResultLike;
  isError?: boolean;
  done: boolean;
}
