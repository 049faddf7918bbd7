// The runtime API's shapes the Threads page reads (the fields it uses).

/** A checkpoint's address. */
export interface CheckpointRef {
  checkpoint_id?: string;
  checkpoint_ns?: string;
  thread_id?: string;
}

/** An interrupt raised by a task (interrupt()) or pending before a node. */
export interface Interrupt {
  value?: unknown;
  id?: string;
}

/** A task of a checkpoint: a node about to run, or that ran, with its interrupts and error. */
export interface Task {
  id: string;
  name: string;
  error?: unknown;
  interrupts?: Interrupt[];
  checkpoint?: CheckpointRef | null;
  state?: unknown;
  result?: unknown;
}

/** One super-step of a thread (a checkpoint), as /threads/{id}/history answers it. */
export interface Snapshot {
  values: Record<string, unknown> | unknown;
  next: string[];
  tasks: Task[];
  metadata: {
    step?: number;
    source?: string;
    writes?: Record<string, unknown> | null;
    run_id?: string;
    assistant_id?: string;
    graph_id?: string;
    [k: string]: unknown;
  } | null;
  created_at?: string;
  checkpoint: CheckpointRef;
  parent_checkpoint?: CheckpointRef | null;
  interrupts?: Interrupt[];
}

/** A thread. */
export interface Thread {
  thread_id: string;
  status: string;
  metadata?: Record<string, unknown> | null;
  values?: unknown;
  interrupts?: Record<string, Interrupt[]> | null;
  created_at?: string;
  updated_at?: string;
}

/** A run of a thread. */
export interface Run {
  run_id: string;
  thread_id?: string;
  assistant_id: string;
  status: string;
  created_at?: string;
  updated_at?: string;
  metadata?: Record<string, unknown> | null;
}
