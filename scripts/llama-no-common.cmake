# Included after every project() of the llama-cpp-python build (CMAKE_PROJECT_INCLUDE, set by
# scripts/llama-wheel). llama-cpp-python forces llama.cpp's `common` helper library on
# (LLAMA_BUILD_COMMON, a cache entry set with FORCE) and llama.cpp then installs it, but the
# Python package loads only libllama and the ggml libraries. A normal variable set in
# llama.cpp's own scope, before its option() reads it, shadows the forced cache entry
# (policy CMP0077), so `common` is neither configured nor built: 57 fewer compile units.
if(PROJECT_NAME STREQUAL "llama.cpp")
  set(LLAMA_BUILD_COMMON OFF)
endif()
