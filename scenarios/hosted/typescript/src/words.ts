// A local module the graph imports: jetgraph bundles it with the graph.
export function greeting(name: string, visits: number): string {
  return `hello ${name} (${process.env.VISIT_WORD ?? "unset"} ${visits})`; // VISIT_WORD: langgraph.json's env
}
