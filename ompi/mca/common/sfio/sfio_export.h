/*
 * sfio_export: marks what the engine library exports.  The engine is built
 * with hidden visibility; the components call only what is marked, so each
 * component DSO and the engine library have a small, deliberate interface.
 * Not OMPI_DECLSPEC: the MPI-free modules (sfio_posixio, sfio_locks) are
 * also compiled into unit tests without Open MPI's headers.
 */
#ifndef MCA_COMMON_SFIO_EXPORT_H
#define MCA_COMMON_SFIO_EXPORT_H

#include "sfio_export.h"

#if defined(__GNUC__)
#define SFIO_EXPORT __attribute__((visibility("default")))
#else
#define SFIO_EXPORT
#endif

#endif
