/* An in-memory object backend for the simulator: a day's objects go to disk as one pack. */
#include <stdlib.h>
#include <string.h>
#include <git2/sys/odb_backend.h>

#include "merge/git/git_int.h"
#include "feeds/sim.h"
#include "util/error.h"
#include "util/xalloc.h"
#include "util/banned.h"

struct memobj {
	git_oid id;
	git_object_t type;
	size_t len;
	unsigned char *data;
};

struct memstore {
	git_odb_backend parent;
	struct memobj *objs;
	size_t nr, alloc;
	size_t *slots; /* index + 1 into objs; 0: empty */
	size_t cap;
};

static size_t slot(const struct memstore *m, const git_oid *id)
{
	size_t h, i;

	memcpy(&h, id->id, sizeof(h));
	for (i = h & (m->cap - 1); m->slots[i] && !git_oid_equal(&m->objs[m->slots[i] - 1].id, id);
	     i = (i + 1) & (m->cap - 1))
		;
	return i;
}

static struct memobj *memstore_find(const struct memstore *m, const git_oid *id)
{
	size_t i;

	if (!m->cap)
		return NULL;
	i = slot(m, id);
	return m->slots[i] ? &m->objs[m->slots[i] - 1] : NULL;
}

static void grow(struct memstore *m)
{
	size_t i;

	free(m->slots);
	m->cap = m->cap ? m->cap * 2 : 4096;
	m->slots = xcalloc(m->cap, sizeof(*m->slots));
	for (i = 0; i < m->nr; i++)
		m->slots[slot(m, &m->objs[i].id)] = i + 1;
}

static int read(void **out, size_t *len, git_object_t *type, git_odb_backend *b,
		  const git_oid *id)
{
	struct memobj *o = memstore_find((struct memstore *)b, id);

	if (!o)
		return GIT_ENOTFOUND;
	*out = git_odb_backend_data_alloc(b, o->len);
	if (!*out)
		return -1;
	memcpy(*out, o->data, o->len);
	*len = o->len;
	*type = o->type;
	return 0;
}

static int read_header(size_t *len, git_object_t *type, git_odb_backend *b, const git_oid *id)
{
	struct memobj *o = memstore_find((struct memstore *)b, id);

	if (!o)
		return GIT_ENOTFOUND;
	*len = o->len;
	*type = o->type;
	return 0;
}

static int exists(git_odb_backend *b, const git_oid *id)
{
	return memstore_find((struct memstore *)b, id) != NULL;
}

static int write(git_odb_backend *b, const git_oid *id, const void *data, size_t len,
		   git_object_t type)
{
	struct memstore *m = (struct memstore *)b;
	struct memobj *o;

	if (memstore_find(m, id))
		return 0;
	if (2 * (m->nr + 1) > m->cap)
		grow(m);
	ALLOC_GROW(m->objs, m->nr + 1, m->alloc);
	o = &m->objs[m->nr];
	o->id = *id;
	o->type = type;
	o->len = len;
	o->data = xmalloc(len ? len : 1);
	memcpy(o->data, data, len);
	m->slots[slot(m, id)] = ++m->nr;
	return 0;
}

static void clear(struct memstore *m)
{
	size_t i;

	for (i = 0; i < m->nr; i++)
		free(m->objs[i].data);
	m->nr = 0;
	if (m->cap)
		memset(m->slots, 0, m->cap * sizeof(*m->slots));
}

static void backend_free(git_odb_backend *b)
{
	struct memstore *m = (struct memstore *)b;

	clear(m);
	free(m->objs);
	free(m->slots);
	free(m);
}

static int foreach(git_odb_backend *b, git_odb_foreach_cb cb, void *payload)
{
	struct memstore *m = (struct memstore *)b;
	size_t i;
	int error;

	for (i = 0; i < m->nr; i++)
		if ((error = cb(&m->objs[i].id, payload)) != 0)
			return error;
	return 0;
}

int sim_git_store_setup(struct sim_world *w)
{
	struct memstore *m = xcalloc(1, sizeof(*m));
	git_config *cfg = NULL;
	git_odb *odb = NULL;
	int error = 0;

	/*
	 * Every object the simulator writes is one it made from objects it just read:
	 * checking each for existence and re-hashing each read only costs time.  A
	 * big world writes tens of thousands of objects a day: they wait here and go
	 * to disk as one pack without a delta search (libgit2 1.5 takes the size
	 * above which it does not search deltas from pack.deltaCacheSize; newer ones
	 * from pack.bigFileThreshold).
	 */
	git_libgit2_opts(GIT_OPT_ENABLE_STRICT_OBJECT_CREATION, 0);
	git_libgit2_opts(GIT_OPT_ENABLE_STRICT_HASH_VERIFICATION, 0);
	git_odb_init_backend(&m->parent, GIT_ODB_BACKEND_VERSION);
	m->parent.read = read;
	m->parent.read_header = read_header;
	m->parent.write = write;
	m->parent.exists = exists;
	m->parent.foreach = foreach;
	m->parent.free = backend_free;
	if (git_repository_config(&cfg, w->store) < 0 ||
	    git_config_set_int64(cfg, "pack.bigFileThreshold", 1) < 0 ||
	    git_config_set_int64(cfg, "pack.deltaCacheSize", 1) < 0 ||
	    git_repository_odb(&odb, w->store) < 0) {
		backend_free(&m->parent);
		error = merge_git_fail("sim: object store");
	} else if (git_odb_add_backend(odb, &m->parent, 1000) < 0) {
		backend_free(&m->parent);
		error = merge_git_fail("sim: object store");
	} else {
		w->mempack = &m->parent;
	}
	git_config_free(cfg);
	git_odb_free(odb);
	return error;
}

int sim_git_put(git_oid *out, struct sim_world *w, const void *data, size_t len,
		git_object_t type)
{
	/*
	 * git_odb_write() first asks every backend whether the object exists, and for a
	 * new one refreshes them all, listing the pack folder: for a long history that
	 * is most of the time.  New objects of a history are new by construction.
	 */
	if (git_odb_hash(out, data, len, type) < 0)
		return merge_git_fail("sim: hashing an object");
	return write(w->mempack, out, data, len, type);
}

int sim_git_flush(struct sim_world *w)
{
	struct memstore *m = (struct memstore *)w->mempack;
	git_packbuilder *pb = NULL;
	git_odb *odb = NULL;
	char *dir = NULL;
	size_t i;
	int error = 0;

	if (!m || !m->nr)
		return 0;
	dir = xstrfmt("%s/objects/pack", git_repository_path(w->store));
	if (git_packbuilder_new(&pb, w->store) < 0) {
		error = merge_git_fail("sim: pack");
		goto done;
	}
	for (i = 0; i < m->nr; i++)
		if (git_packbuilder_insert(pb, &m->objs[i].id, NULL) < 0) {
			error = merge_git_fail("sim: pack");
			goto done;
		}
	if (git_packbuilder_write(pb, dir, 0, NULL, NULL) < 0 ||
	    git_repository_odb(&odb, w->store) < 0 || git_odb_refresh(odb) < 0) {
		error = merge_git_fail("sim: writing a pack");
		goto done;
	}
	clear(m);
done:
	git_packbuilder_free(pb);
	git_odb_free(odb);
	free(dir);
	return error;
}
