#ifndef E2BW_SUITES_H
#define E2BW_SUITES_H
void suite_util(void);
void suite_ndjson(void);
void suite_jsonrpc(void);
void suite_errors(void);
void suite_dispatch(void);
void suite_config(void);
void suite_sandbox(void);
void suite_transport(void);
void suite_codecs(void);
void suite_process(void);
void suite_files(void);
void suite_redact(void);
void suite_redirects(void);
void suite_oom(void);
#endif
