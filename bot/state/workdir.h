/*
 * The workdir is private: state, outbox, runs, the verdict cache and the config's
 * copies are the bot's alone; the runner user reaches its worker trees and nothing
 * else of it.
 */
#ifndef BOT_WORKDIR_H
#define BOT_WORKDIR_H

/*
 * Creates `workdir` if missing and tightens what an older nextbot (or a careless
 * umask) left open: the workdir itself at most 0711 (traversable, not listable),
 * folders 0700 and files 0600 below it, `workers/` and each worker folder 0711 (so
 * the runner user can reach the tree inside that is its own; nothing in a tree is
 * touched).  As root, the work repository `repo.git` is made readable by `user`'s
 * group (folders 2750, files 0640 or 0440, created first when missing): the
 * worker checkouts are made, and git in the sandbox reads it, as that user.
 * Folders already 0700 are taken as done: an unchanged workdir costs a few stats.
 * Returns 0, or NB_ERROR (recorded) when the workdir cannot be made.
 */
int workdir_make_private(const char *workdir, const char *user);

/*
 * Whether `user` may reach `dir` (search permission on every component of the
 * path that exists, checked by a child that has become that user).  Only meaningful as root:
 * otherwise commands run as ourselves and this returns 0.  Returns 0, or NB_ERROR
 * with a message naming the component that stops it ("'/root' (0700 root:root)").
 */
int workdir_check_reach(const char *dir, const char *user);

/*
 * Whether `user` reaches the object stores the work repository borrows from (its
 * objects/info/alternates): checkouts and git in the box read them as that user.
 * Returns 0, or NB_ERROR naming the store and what stops it.
 */
int workdir_check_alternates(const char *workdir, const char *user);

/*
 * Whether the sandbox starts here: `true` run in a box hiding `workdir`, as `user`
 * (as root).  bwrap needs unprivileged user namespaces (a container may forbid
 * them).  Returns 0, or NB_ERROR with bwrap's own reason.
 */
int workdir_check_sandbox(const char *bwrap, const char *user, const char *workdir);

#endif
