# Embeds the lemma catalogue (src/symbolic/lemmas/*.rules) into gg_core as a generated source,
# so that the binary finds its lemmas from any working directory. Regenerated when a rule file
# changes (a new file is picked up by the CONFIGURE_DEPENDS glob). Included from the root
# CMakeLists.txt after gg_core is defined; this file is also the generator script (-P mode).
if(CMAKE_SCRIPT_MODE_FILE)
  # Script mode: GG_LEMMA_OUT, GG_LEMMA_FILES (|-separated, sorted).
  string(REPLACE "|" ";" GG_LEMMA_FILES "${GG_LEMMA_FILES}")
  set(body "// Generated from src/symbolic/lemmas/*.rules by embed_lemmas.cmake; do not edit.\n")
  string(APPEND body "#include \"symbolic/lemma_catalogue.h\"\n\nnamespace gg::symbolic {\n\n")
  string(APPEND body "std::vector<LemmaFile> EmbeddedLemmaFiles() {\n  return {\n")
  foreach(file ${GG_LEMMA_FILES})
    get_filename_component(name ${file} NAME)
    file(READ ${file} text)
    string(APPEND body "      {\"${name}\", R\"GGRULES(${text})GGRULES\"},\n")
  endforeach()
  string(APPEND body "  };\n}\n\n}  // namespace gg::symbolic\n")
  file(WRITE ${GG_LEMMA_OUT}.tmp "${body}")
  file(COPY_FILE ${GG_LEMMA_OUT}.tmp ${GG_LEMMA_OUT} ONLY_IF_DIFFERENT)
  return()
endif()

file(GLOB GG_LEMMA_FILES CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/*.rules)
list(SORT GG_LEMMA_FILES)
set(GG_LEMMA_OUT ${CMAKE_BINARY_DIR}/generated/lemma_files.cc)
string(REPLACE ";" "|" GG_LEMMA_FILE_ARG "${GG_LEMMA_FILES}")
add_custom_command(
  OUTPUT ${GG_LEMMA_OUT}
  COMMAND ${CMAKE_COMMAND} "-DGG_LEMMA_OUT=${GG_LEMMA_OUT}" "-DGG_LEMMA_FILES=${GG_LEMMA_FILE_ARG}"
          -P ${CMAKE_CURRENT_LIST_DIR}/embed_lemmas.cmake
  DEPENDS ${GG_LEMMA_FILES} ${CMAKE_CURRENT_LIST_DIR}/embed_lemmas.cmake
  COMMENT "Embedding the lemma catalogue"
  VERBATIM)
target_sources(gg_core PRIVATE ${GG_LEMMA_OUT})
