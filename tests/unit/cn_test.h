/* SPDX-License-Identifier: BSD-2-Clause */
/* Shared by the cmocka test programs. cmocka's assert_* macros are not
 * affected by NDEBUG, so every check here holds in release builds. */
#ifndef CN_TEST_H
#define CN_TEST_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

/* Sanitizer builds cannot run under valgrind. */
#if defined(__SANITIZE_ADDRESS__)
#define CN_TEST_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define CN_TEST_SANITIZED 1
#endif
#endif

#endif
