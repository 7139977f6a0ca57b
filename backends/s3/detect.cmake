# Included by backends/CMakeLists.txt when CKPT_BACKEND_S3 is not OFF: sets `found` and
# `missing`. libcurl 7.75 or later, which signs requests with SigV4 itself (CURLOPT_AWS_SIGV4).
find_package(CURL QUIET)
set(found FALSE)
set(missing "libcurl 7.75 or later with its headers (install libcurl4-openssl-dev)")
if(CURL_FOUND AND CURL_VERSION_STRING VERSION_GREATER_EQUAL 7.75)
  set(found TRUE)
  message(STATUS "ckptbench: s3 backend with libcurl ${CURL_VERSION_STRING}")
elseif(CURL_FOUND)
  set(missing "libcurl 7.75 or later (found ${CURL_VERSION_STRING}, without CURLOPT_AWS_SIGV4)")
endif()
