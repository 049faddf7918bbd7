// An Auth where each user owns what they create: owners_auth.py of the Python scenario project,
// written in TypeScript (both hosts must answer alike). Tokens name users, create adds
// metadata.owner, every other operation on threads and crons is filtered to the user's own, the
// store is split by user, and some rules refuse: a thread is deleted only with the
// threads:delete permission, a guest (is_authenticated false) may not search threads,
// assistants are never updated, and an assistant's delete rule answers what is no filter.
import { Auth, HTTPException } from "@langchain/langgraph-sdk/auth";

type Value = Record<string, unknown>;
type User = { identity: string; permissions: string[]; display_name?: string; is_authenticated?: boolean };

// bob's user is his bare identity, as a handler may answer (the SDK's types ask for an object).
const USERS: Record<string, User | string> = {
  "tok-ada": { identity: "ada", display_name: "Ada L.", permissions: ["threads:delete"] },
  "tok-bob": "bob",
  "tok-guest": { identity: "guest", permissions: [], is_authenticated: false },
};

function own(identity: string, value: Value): void {
  const metadata = (value.metadata ?? {}) as Value;
  metadata.owner = identity;
  value.metadata = metadata;
}

export const auth = new Auth()
  .authenticate(async (request: Request) => {
    const [scheme, token] = (request.headers.get("authorization") ?? "").split(" ", 2);
    if (scheme?.toLowerCase() !== "bearer" || !token) throw new HTTPException(401, { message: "Missing bearer token" });
    const user = USERS[token];
    if (user === undefined) throw new HTTPException(401, { message: "Unknown token" });
    return user as User;
  })
  .on("threads:create", ({ user, value }) => {
    own(user.identity, value as unknown as Value);
  })
  .on("threads:delete", ({ user, permissions }) => {
    if (!permissions.includes("threads:delete")) throw new HTTPException(403, { message: `${user.identity} may not delete threads` });
    return { owner: user.identity };
  })
  .on("threads:search", ({ user }) => {
    if (!user.is_authenticated) throw new HTTPException(403, { message: "guests may not search threads" });
    return { owner: user.identity };
  })
  .on("threads", ({ user, action, value }) => {
    if (action === "create_run") own(user.identity, value as unknown as Value);
    return { owner: user.identity };
  })
  .on("assistants:create", ({ user, value }) => {
    own(user.identity, value as unknown as Value);
  })
  .on("assistants:update", () => false)
  .on("assistants:delete", () => "yes" as never)
  .on("crons:create", ({ user, value }) => {
    own(user.identity, value as unknown as Value);
  })
  .on("crons", ({ user }) => ({ owner: user.identity }))
  .on("store", ({ user, value }) => {
    const v = value as unknown as Value;
    v.namespace = [user.identity, ...((v.namespace as string[] | null) ?? [])];
  });
