"""The wide-schema test bed: 1,200 tables over 20 business domains, and routing questions.

``generate(seed=0)`` builds the same schema every time: each domain is one datasource of 60
tables - hand-written entity, fact, lookup and link tables, four generic tables every domain
shares (``app_user``, ``audit_log``, ...), and audit/staging/history tables derived from its
main entities, which make routing harder the way a real warehouse does. Some domains use
``snake_case`` names, some ``PascalCase`` (as Chinook does), some plural table names.
``seed`` only changes the sampled row values, never the schema or the questions.

``routing_cases()`` are questions written by hand against what the schema *means* (the test
bed's gold): each names the datasource(s) it needs and the tables a right answer reads.

Table specs below are one line per table: ``name: column column=value|value column:type``.
A leading ``*`` marks a main entity; ``=a|b`` gives the column's sampled values; ``:type``
overrides the type guessed from the column's name. Every table gets ``<name>_id`` as its key.
"""

from __future__ import annotations

import random
import sqlite3
from datetime import date, datetime, timedelta
from pathlib import Path

import attrs

__all__ = ["TABLES_PER_DOMAIN", "WideCase", "WideSchema", "generate"]

TABLES_PER_DOMAIN = 60
ROWS_PER_TABLE = 4

# ---------------------------------------------------------------------------------------------
# The domains (name, style, plural table names, description, tables)

# fmt: off
_DOMAINS: list[tuple[str, str, bool, str, str]] = [
    ("hr", "snake", True,
     "Human resources: employees, departments, positions, hiring and recruiting, leave and "
     "vacation, performance reviews, training and certifications.", """
*employee: first_name last_name email hire_date termination_date department_id position_id manager_id:int employment_type=full_time|part_time|contractor|intern status=active|on_leave|terminated
*department: department_name=Engineering|Finance|Human Resources|Warehouse cost_center location_id
*position: job_title=Software Engineer|Accountant|Recruiter|Forklift Operator job_family grade_id is_manager
grade: grade_code min_salary max_salary
location: office_name city country
*leave_request: employee_id leave_type_id start_date end_date days_requested:num status=approved|pending|rejected|cancelled approver_id:int
leave_type: leave_type_name=Vacation|Sick Leave|Parental Leave|Bereavement is_paid
leave_balance: employee_id leave_type_id year entitled_days:num used_days:num carried_over_days:num
*job_requisition: position_id department_id opened_on hiring_manager_id:int headcount status=open|filled|cancelled
*candidate: first_name last_name email source=referral|job board|agency|career site current_employer
job_application: candidate_id job_requisition_id applied_on stage=screening|interview|offer|hired|rejected
interview: job_application_id interviewer_id:int scheduled_at interview_type=phone|onsite|panel rating:int feedback
offer: job_application_id offered_salary:num offered_on accepted_on status=accepted|declined|pending
*performance_review: employee_id reviewer_id:int review_period overall_rating:int goals_met_pct:num comments
goal: employee_id goal_title due_date progress_pct:num
training_course: course_title=Fire Safety|Harassment Prevention|Leadership Basics|Excel for Analysts provider duration_hours:num is_mandatory
training_enrollment: employee_id training_course_id enrolled_on completed_on score:int
certification: employee_id certification_name=First Aid|PMP|CPA|Forklift License issued_on expires_on
skill: skill_name=Python|Negotiation|SQL|Welding
employee_skill: employee_id skill_id proficiency_level:int
emergency_contact: employee_id contact_name relationship=spouse|parent|sibling|friend phone
disciplinary_action: employee_id action_type=verbal warning|written warning|suspension issued_on reason
exit_interview: employee_id interview_date reason_for_leaving=better pay|relocation|career change|retirement would_rejoin:bool
headcount_snapshot: department_id snapshot_date headcount:int open_positions:int
onboarding_task: employee_id task_name=laptop setup|badge photo|policy sign-off due_date completed_on
"""),
    ("payroll", "snake", False,
     "Payroll: pay runs and payslips, earnings and deductions, tax withholding, timesheets, "
     "bonuses, benefits and direct deposits.", """
*pay_run: pay_period_id run_date status=draft|approved|paid processed_by
pay_period: period_start period_end pay_frequency=weekly|biweekly|monthly
*payslip: pay_run_id worker_id gross_pay:num net_pay:num tax_withheld:num
payslip_line: payslip_id earning_code_id deduction_code_id amount hours:num
earning_code: code=REG|OT|BONUS|COMM description=Regular pay|Overtime|Bonus|Commission is_taxable
deduction_code: code=401K|HEALTH|DENTAL|GARNISH description=Retirement plan|Health insurance|Dental insurance|Wage garnishment is_pre_tax
*worker: worker_number full_name tax_id:text bank_account_id pay_grade_id hourly_rate:num annual_salary:num
bank_account: worker_id bank_name=First National|Harbor Credit Union|Metro Bank|Union Savings account_number routing_number
pay_grade: grade_code base_salary:num
*timesheet: worker_id week_start regular_hours:num overtime_hours:num approved_by
timesheet_entry: timesheet_id work_date hours:num project_code
tax_jurisdiction: jurisdiction_name=Federal|California|New York|Texas tax_type=income|social security|medicare|state income
tax_bracket: tax_jurisdiction_id lower_bound:num upper_bound:num tax_rate:num
worker_tax_election: worker_id tax_jurisdiction_id filing_status=single|married|head of household allowances:int
*bonus: worker_id bonus_type=annual|signing|retention|spot amount awarded_on
commission: worker_id sale_reference commission_rate:num amount
garnishment: worker_id issuing_authority=child support|tax levy|student loan amount_per_period:num start_date
reimbursement: worker_id expense_category=mileage|meals|travel|equipment amount submitted_on paid_on
benefit_plan: plan_name=Gold PPO|Silver HMO|Dental Plus|Vision Basic employer_contribution:num employee_contribution:num
benefit_enrollment: worker_id benefit_plan_id coverage_level=employee|employee+spouse|family effective_date
year_end_statement: worker_id tax_year:int total_wages:num total_tax:num
direct_deposit: payslip_id bank_account_id amount deposited_on
minimum_wage_rate: tax_jurisdiction_id effective_date hourly_rate:num
"""),
    ("crm", "pascal", False,
     "Customer relationship management: accounts, contacts, leads, the opportunity pipeline, "
     "sales activities, quotes, contracts and renewals, forecasts and churn risk.", """
*account: account_name industry=Software|Retail|Healthcare|Manufacturing annual_revenue:num employee_count:int owner_user_id:int
*contact: account_id first_name last_name email job_title phone
*lead: company_name contact_name email lead_source=webinar|trade show|cold call|website lead_score:int status=new|qualified|converted|disqualified
*opportunity: account_id opportunity_name stage=prospecting|proposal|negotiation|closed won|closed lost amount close_date probability:num
opportunity_line_item: opportunity_id product_id quantity unit_price
product: product_name list_price:num product_family
*activity: contact_id activity_type=call|email|meeting|demo subject due_date is_completed
*campaign_member: lead_id contact_id campaign_name responded_on
pipeline_stage: stage_name probability:num sort_order:int
*crm_case: account_id contact_id subject priority=low|medium|high status=open|closed
sales_rep: full_name region territory_id quota:num
territory: territory_name=EMEA|North America|APAC|LATAM
quote: opportunity_id quote_number valid_until total_amount:num
quote_line: quote_id product_id quantity discount:num
contract: account_id start_date end_date contract_value:num renewal_status=auto renew|up for renewal|churned
customer_segment: segment_name=Enterprise|Mid-Market|SMB|Startup
account_segment: account_id customer_segment_id
partner: partner_name partner_type=reseller|referral|integrator
email_interaction: contact_id sent_at opened_at clicked_at subject
meeting_note: activity_id notes
forecast: sales_rep_id fiscal_quarter forecast_amount:num committed_amount:num
churn_risk_score: account_id scored_on risk_score:num
account_hierarchy: parent_account_id:int child_account_id:int
"""),
    ("sales", "pascal", True,
     "Sales order management: customers and customer groups, sales orders and order lines, "
     "invoices and payments, credit notes, returns, price lists, salespeople and targets.", """
*customer: company_name contact_name billing_city billing_country credit_limit:num customer_group_id
customer_group: group_name=Wholesale|Retail|Distributor|Online
*sales_order: customer_id order_date required_date shipped_date sales_channel=online|phone|field|marketplace status=open|shipped|invoiced|cancelled salesperson_id
sales_order_line: sales_order_id product_id quantity unit_price discount:num
product: sku product_name category_id unit_price standard_cost:num
product_category: category_name=Beverages|Snacks|Household|Personal Care
*invoice: sales_order_id customer_id invoice_date due_date total_amount:num
invoice_line: invoice_id product_id quantity line_total:num
payment: invoice_id paid_on amount payment_method=card|wire|check|cash
credit_note: invoice_id issued_on amount reason=damaged goods|pricing error|late delivery
*salesperson: full_name region commission_rate:num hire_date
sales_target: salesperson_id fiscal_month target_amount:num
price_list: price_list_name currency valid_from valid_to
price_list_item: price_list_id product_id price:num
discount_rule: rule_name min_quantity:int discount_pct:num
*return_authorization: sales_order_id customer_id requested_on reason=defective|wrong item|not needed approved:bool
return_line: return_authorization_id product_id quantity refund_amount:num
backorder: sales_order_line_id expected_date quantity
sales_region: region_name=North|South|East|West
shipping_method: method_name=Ground|Express|Freight carrier
order_shipment: sales_order_id shipping_method_id shipped_on tracking_number
customer_address: customer_id address_type=billing|shipping street city postal_code country
"""),
    ("inventory", "snake", False,
     "Inventory and warehousing: warehouses and bin locations, items and stock levels, stock "
     "movements and adjustments, cycle counts, purchase orders, suppliers and goods receipts.", """
*warehouse: warehouse_name city country capacity_pallets:int
*bin_location: warehouse_id aisle rack shelf
*item: sku item_description unit_of_measure=each|box|pallet|kg reorder_point:int safety_stock:int item_class_id
item_class: class_name=Raw Material|Finished Good|Packaging|Spare Part
stock_level: item_id warehouse_id quantity_on_hand:int quantity_reserved:int
stock_movement: item_id from_bin_id:int to_bin_id:int quantity movement_type=receipt|issue|transfer|adjustment moved_at
*cycle_count: warehouse_id counted_on counter_name
cycle_count_line: cycle_count_id item_id expected_qty:int counted_qty:int variance:int
*purchase_order: supplier_id ordered_on expected_on status=open|received|closed|cancelled
purchase_order_line: purchase_order_id item_id quantity unit_cost:num
*supplier: supplier_name country lead_time_days:int rating:int
goods_receipt: purchase_order_id received_on received_by
goods_receipt_line: goods_receipt_id item_id quantity_received:int quantity_rejected:int
lot: item_id lot_number expiry_date manufactured_on
serial_number: item_id serial_code status=in stock|sold|scrapped
stock_adjustment: item_id warehouse_id quantity reason=damaged|expired|shrinkage|found adjusted_on
reorder_suggestion: item_id warehouse_id suggested_qty:int generated_on
item_supplier: item_id supplier_id supplier_sku unit_cost:num
unit_conversion: from_unit to_unit factor:num
stock_valuation: item_id valuation_date unit_cost:num total_value:num
pick_list: warehouse_id created_on picker_name
pick_list_line: pick_list_id item_id bin_location_id quantity
"""),
    ("logistics", "snake", True,
     "Logistics and transport: shipments and parcels, carriers, hubs, routes and trips, "
     "vehicles and drivers, tracking events, deliveries, freight rates and customs.", """
*shipment: origin_hub_id:int destination_hub_id:int carrier_id shipped_at delivered_at weight_kg:num status=in transit|delivered|delayed|lost
*carrier: carrier_name=DHL|FedEx|Maersk|UPS mode=road|air|ocean|rail
*hub: hub_name city country hub_type=cross-dock|depot|port
*vehicle: plate_number vehicle_type=van|truck|trailer capacity_kg:num fuel_type=diesel|electric|lpg
*driver: full_name license_number license_expiry_date phone
route: route_code origin_hub_id:int destination_hub_id:int distance_km:num
route_stop: route_id stop_sequence:int hub_id planned_arrival_at
*trip: route_id vehicle_id driver_id departed_at arrived_at
trip_shipment: trip_id shipment_id
parcel: shipment_id tracking_number weight_kg:num length_cm:num
tracking_event: parcel_id event_type=picked up|arrived at hub|out for delivery|delivered|exception event_at hub_id
delivery_attempt: parcel_id attempted_at outcome=delivered|no one home|refused|address not found
proof_of_delivery: parcel_id signed_by signature_captured_at photo_url
freight_rate: carrier_id origin_country destination_country rate_per_kg:num
fuel_purchase: vehicle_id purchased_on litres:num cost
vehicle_maintenance: vehicle_id serviced_on service_type=oil change|tyres|brakes|inspection cost
customs_declaration: shipment_id hs_code declared_value:num duty_amount:num cleared_on
container: container_number container_type=20ft|40ft|reefer shipment_id
dock_appointment: hub_id carrier_id appointment_at dock_door
driver_hours_log: driver_id log_date driving_hours:num rest_hours:num
damage_report: shipment_id reported_on damage_type=crushed|wet|missing item claim_amount:num
"""),
    ("manufacturing", "snake", False,
     "Manufacturing: production orders, bills of material, work centers and machines, "
     "routings, operators and shifts, downtime, maintenance, quality inspections and scrap.", """
*production_order: product_id work_center_id planned_qty:int produced_qty:int start_date due_date status=planned|released|in progress|completed
*product: product_code product_name product_type=assembly|component
*bill_of_material: parent_product_id:int component_product_id:int quantity_per:num
*work_center: work_center_name=Assembly Line 1|Paint Shop|CNC Cell|Packing capacity_hours_per_day:num
*machine: work_center_id machine_name manufacturer installed_on
routing_operation: product_id operation_seq:int work_center_id setup_minutes:int run_minutes_per_unit:num
operation_log: production_order_id routing_operation_id operator_id started_at finished_at
*operator: full_name shift_id certification_level:int
shift: shift_name=Morning|Afternoon|Night start_time end_time
machine_downtime: machine_id started_at ended_at downtime_reason=breakdown|changeover|no material|planned maintenance
maintenance_work_order: machine_id opened_on closed_on maintenance_type=preventive|corrective technician
spare_part: part_number description stock_qty:int
quality_inspection: production_order_id inspected_at inspector sample_size:int defects_found:int result=pass|fail|rework
defect: quality_inspection_id defect_code=scratch|misalignment|porosity|crack severity=minor|major|critical
scrap_record: production_order_id quantity scrap_reason=defect|setup|damage recorded_at
material_issue: production_order_id component_product_id:int quantity issued_at
yield_measurement: production_order_id good_units:int total_units:int oee_pct:num
energy_meter_reading: machine_id read_at kwh:num
tooling: tool_code tool_type=mold|die|fixture cycles_used:int max_cycles:int
engineering_change: product_id change_number description effective_date
production_schedule: work_center_id schedule_date production_order_id sequence:int
"""),
    ("ledger", "snake", False,
     "Finance and general ledger: chart of accounts, journal entries, fiscal periods, cost "
     "centers, accounts payable and receivable, budgets, fixed assets and depreciation, "
     "currencies and bank reconciliation.", """
*gl_account: account_number account_name account_type=asset|liability|equity|revenue|expense parent_account_id:int
*journal_entry: entry_date posted_by description source=AP|AR|payroll|manual is_reversed
journal_line: journal_entry_id gl_account_id debit:num credit:num cost_center_id
*fiscal_period: fiscal_year:int period_number:int start_date end_date is_closed
cost_center: cost_center_code cost_center_name=Corporate|R&D|Operations|Sales
*vendor: vendor_name tax_id:text payment_terms=net 30|net 60|due on receipt
*ap_invoice: vendor_id invoice_number invoice_date due_date amount status=unpaid|paid|disputed
ap_payment: ap_invoice_id paid_on amount payment_method=ach|check|wire
*ar_invoice: client_id invoice_number invoice_date due_date amount status=open|paid|written off
ar_receipt: ar_invoice_id received_on amount
client: client_name credit_terms
budget: gl_account_id cost_center_id fiscal_period_id budget_amount:num
bank_statement_line: bank_account_code transaction_date amount description
bank_reconciliation: bank_account_code reconciled_on difference:num
fixed_asset: asset_tag description acquired_on acquisition_cost:num useful_life_years:int
depreciation_entry: fixed_asset_id fiscal_period_id depreciation_amount:num
tax_code: code rate:num description=VAT standard|VAT reduced|exempt
exchange_rate: from_currency=USD|EUR|GBP|JPY to_currency=EUR|USD|JPY|GBP rate_date rate:num
intercompany_transfer: from_entity to_entity amount transfer_date
trial_balance: gl_account_id fiscal_period_id closing_balance:num
accrual: gl_account_id fiscal_period_id amount reversal_date
expense_claim: employee_name expense_type=travel|meals|software submitted_on amount approved:bool
"""),
    ("marketing", "snake", True,
     "Marketing: campaigns, ad groups and ads, ad spend, audiences and subscribers, email "
     "sends, landing pages and forms, attribution, social media, influencers and A/B tests.", """
*campaign: campaign_name channel=email|social|search|display|tv start_date end_date budget objective=awareness|leads|conversions
ad_group: campaign_id ad_group_name targeting
*ad: ad_group_id headline creative_type=banner|video|text|carousel
ad_impression_daily: ad_id report_date impressions:int clicks:int spend:num
*audience_segment: segment_name=Millennials|Parents|Frequent Buyers|Lapsed Users rule_definition
*subscriber: email subscribed_on unsubscribed_on audience_segment_id
*email_send: campaign_id subject_line sent_at recipients:int
email_event: email_send_id subscriber_id event_type=open|click|bounce|unsubscribe event_at
landing_page: url page_title campaign_id
form_submission: landing_page_id submitted_at email utm_source
utm_parameter: utm_source=google|facebook|newsletter|linkedin utm_medium utm_campaign
attribution_touchpoint: form_submission_id campaign_id touch_order:int attribution_weight:num
social_post: platform=Instagram|TikTok|LinkedIn|X posted_at caption likes:int shares:int
*influencer: handle platform=Instagram|TikTok|YouTube|Twitch follower_count:int fee_per_post:num
influencer_contract: influencer_id campaign_id posts_agreed:int total_fee:num
promo_code: code discount_pct:num valid_until campaign_id redemptions:int
brand_survey: survey_date brand_awareness_pct:num net_promoter_score:int
ab_test: test_name variant_a variant_b winner started_on
ab_test_result: ab_test_id variant visitors:int conversions:int
media_budget_allocation: channel=social|search|display|tv fiscal_quarter allocated_amount:num spent_amount:num
keyword: keyword_text match_type=exact|phrase|broad cost_per_click:num ad_group_id
"""),
    ("support", "pascal", True,
     "Customer support help desk: tickets, requesters, agents, teams and queues, comments, "
     "SLA policies and breaches, satisfaction surveys, knowledge base, calls and chats, "
     "escalations and outage incidents.", """
*ticket: requester_id agent_id queue_id subject priority=low|normal|high|urgent status=new|open|pending|solved|closed channel=email|chat|phone|web opened_at solved_at
*requester: full_name email organization
*agent: full_name team_id is_active
team: team_name=Tier 1|Tier 2|Billing|Escalations
*queue: queue_name=General|Billing|Technical|VIP
ticket_comment: ticket_id author_agent_id:int body is_public
ticket_tag: ticket_id tag=refund|bug|password reset|outage
sla_policy: priority=low|normal|high|urgent first_response_minutes:int resolution_minutes:int
sla_breach: ticket_id sla_policy_id breached_at breach_type=first response|resolution
csat_survey: ticket_id rating:int comment responded_at
*knowledge_article: title body category view_count:int helpful_votes:int
article_feedback: knowledge_article_id was_helpful:bool submitted_at
macro: macro_name=Refund issued|Escalate to level 2|Ask for logs actions
escalation: ticket_id from_team_id:int to_team_id:int escalated_at reason
agent_shift: agent_id shift_date start_time end_time
call_record: ticket_id agent_id call_started_at duration_seconds:int hold_seconds:int
chat_session: ticket_id agent_id started_at wait_seconds:int message_count:int
*outage_incident: service_name=Login|Payments|Search|API started_at resolved_at severity=sev1|sev2|sev3
incident_ticket_link: outage_incident_id ticket_id
satisfaction_trend: week_start avg_rating:num responses:int
canned_response: title body
agent_skill: agent_id skill=billing|networking|spanish|french
"""),
    ("healthcare", "snake", False,
     "Hospital and clinical care: patients, providers and departments, encounters and "
     "admissions, diagnoses, procedures, medications and prescriptions, lab tests, vital signs, "
     "allergies, immunizations, appointments, beds and medical billing.", """
*patient: medical_record_number first_name last_name date_of_birth sex=F|M|X insurance_provider
*provider: full_name specialty=Cardiology|Pediatrics|Orthopedics|Oncology npi_number department_id
department: department_name=Emergency|Radiology|ICU|Maternity
*encounter: patient_id provider_id encounter_type=inpatient|outpatient|emergency|telehealth admitted_at discharged_at
*diagnosis: encounter_id icd10_code description=Type 2 diabetes|Hypertension|Asthma|Influenza is_primary
procedure_performed: encounter_id cpt_code description performed_on
*medication: drug_name=Metformin|Lisinopril|Amoxicillin|Atorvastatin strength form=tablet|capsule|injection
prescription: encounter_id medication_id dosage frequency=once daily|twice daily|as needed days_supply:int
lab_order: encounter_id test_name=HbA1c|CBC|Lipid Panel|Blood Culture ordered_at
lab_result: lab_order_id result_value:num unit reference_range abnormal_flag=H|L|N
vital_sign: encounter_id measured_at systolic_bp:int diastolic_bp:int heart_rate:int temperature_c:num
allergy: patient_id allergen=Penicillin|Peanuts|Latex|Shellfish reaction severity
immunization: patient_id vaccine=Influenza|MMR|Tetanus|COVID-19 administered_on
appointment: patient_id provider_id scheduled_at status=booked|completed|no show|cancelled
bed: ward room_number bed_number is_occupied
bed_assignment: encounter_id bed_id assigned_at released_at
medical_claim: encounter_id payer billed_amount:num paid_amount:num claim_status=submitted|paid|denied
readmission: patient_id original_encounter_id:int readmitted_encounter_id:int days_between:int
care_plan: patient_id condition goal review_date
referral: patient_id from_provider_id:int to_provider_id:int reason referred_on
radiology_study: encounter_id modality=X-ray|MRI|CT|Ultrasound body_part read_by
"""),
    ("education", "snake", True,
     "University and school administration: students and programs, courses and sections, "
     "instructors, terms, enrollments and grades, assignments, exams, attendance, tuition, "
     "scholarships, transcripts and graduation.", """
*student: student_number first_name last_name enrollment_year:int program_id advisor_id:int
*program: program_name=Computer Science|Nursing|Economics|History degree_level=BSc|MSc|PhD
*course: course_code title=Introductory Statistics|Organic Chemistry|Microeconomics|World History credits:int department_id
department: department_name faculty
*instructor: full_name department_id rank=lecturer|assistant professor|professor
*course_section: course_id instructor_id term_id classroom_id capacity:int
term: term_name=Fall 2023|Spring 2024|Summer 2024 start_date end_date
enrollment: student_id course_section_id enrolled_on status=enrolled|dropped|completed
grade: enrollment_id letter_grade=A|B|C|D|F grade_points:num
assignment: course_section_id title due_date max_points:int
submission: assignment_id student_id submitted_at points_awarded:num is_late
attendance: course_section_id student_id class_date present:bool
classroom: building room_number seats:int
tuition_invoice: student_id term_id amount due_date paid:bool
scholarship: scholarship_name=Merit Award|Need Grant|Athletic Scholarship amount
scholarship_award: scholarship_id student_id term_id awarded_amount:num
prerequisite: course_id prerequisite_course_id:int
exam: course_section_id exam_type=midterm|final|quiz exam_date
exam_result: exam_id student_id score:num
transcript: student_id term_id gpa:num credits_earned:int
graduation: student_id program_id graduated_on honors=cum laude|magna cum laude|summa cum laude
library_loan: student_id book_title borrowed_on returned_on
"""),
    ("real_estate", "snake", False,
     "Real estate brokerage and property management: properties, listings, agents and "
     "brokerages, showings, buyers and offers, closed sales, leases, tenants and rent, "
     "maintenance requests, property taxes, mortgages and appraisals.", """
*property: address city neighborhood property_type=condo|single family|townhouse|duplex bedrooms:int bathrooms:num square_feet:int year_built:int
*listing: property_id agent_id list_price:num listed_on status=active|under contract|sold|withdrawn
*agent: full_name brokerage_id license_number
brokerage: brokerage_name city
*showing: listing_id agent_id buyer_id shown_at feedback
*buyer: full_name pre_approved_amount:num
offer: listing_id buyer_id offer_price:num offered_on status=accepted|rejected|countered
*sale_transaction: listing_id buyer_id sale_price:num closing_date commission:num
*lease: property_id tenant_id monthly_rent:num start_date end_date security_deposit:num
tenant: full_name email credit_score:int
rent_payment: lease_id paid_on amount late_fee:num
maintenance_request: property_id tenant_id issue=leaking faucet|broken heater|pest control|mold reported_on resolved_on
property_tax_assessment: property_id assessment_year:int assessed_value:num tax_amount:num
mortgage: sale_transaction_id lender loan_amount:num interest_rate:num term_years:int
open_house: listing_id event_date visitors:int
price_change: listing_id old_price:num new_price:num changed_on
hoa: hoa_name monthly_dues:num
property_hoa: property_id hoa_id
inspection_report: property_id inspected_on inspector findings=roof damage|foundation crack|none|electrical issue
appraisal: property_id appraised_on appraised_value:num
zoning: property_id zoning_code=R1|R2|C1|MU
"""),
    ("insurance", "snake", False,
     "Insurance: policyholders and policies (auto, home, life, travel), coverages, premiums, "
     "claims and payouts, adjusters, underwriting, brokers, fraud flags and loss ratios.", """
*policyholder: full_name date_of_birth city risk_tier=low|medium|high
*policy: policyholder_id product_line=auto|home|life|travel policy_number effective_date expiry_date annual_premium:num status=active|lapsed|cancelled
coverage: policy_id coverage_type=collision|liability|flood|fire|theft limit_amount:num deductible:num
*claim: policy_id loss_date reported_date cause_of_loss=flood|fire|theft|hail|collision claim_status=open|approved|denied|paid
claim_payment: claim_id paid_on payout_amount:num
claim_reserve: claim_id reserve_amount:num set_on
*adjuster: full_name region caseload:int
claim_assignment: claim_id adjuster_id assigned_on
*underwriter: full_name authority_limit:num
underwriting_decision: policy_id underwriter_id decision=approved|declined|referred decided_on
premium_installment: policy_id due_date amount paid_on
*broker: broker_name commission_rate:num
policy_broker: policy_id broker_id
insured_vehicle: policy_id vin make model model_year:int
insured_property: policy_id address construction_type=wood frame|brick|concrete flood_zone=A|X|V
beneficiary: policy_id beneficiary_name relationship share_pct:num
fraud_flag: claim_id flagged_on fraud_score:num reason
reinsurance_treaty: treaty_name reinsurer ceded_pct:num
policy_endorsement: policy_id endorsement_type=add driver|change address|increase limit effective_date premium_change:num
quote_request: full_name product_line=auto|home|life|travel requested_on quoted_premium:num
loss_ratio_snapshot: product_line=auto|home|life|travel snapshot_month earned_premium:num incurred_losses:num
"""),
    ("energy", "snake", False,
     "Energy utility: meters and readings, sites, tariffs, customer accounts and bills, power "
     "plants and generation, substations and the grid, outages, solar and EV charging, "
     "emissions and wholesale prices.", """
*meter: meter_serial site_id meter_type=electric|gas|water installed_on
*site: site_name address tariff_id customer_account_id
meter_reading: meter_id read_at reading_kwh:num is_estimated
interval_consumption: meter_id interval_start kwh:num
*tariff: tariff_name=Standard Residential|Time of Use|Commercial Flat unit_rate:num standing_charge:num
*customer_account: account_holder account_number billing_address
utility_bill: customer_account_id bill_period_start bill_period_end amount_due:num due_date
bill_payment: utility_bill_id paid_on amount
*power_plant: plant_name fuel_source=solar|wind|gas|hydro|coal capacity_mw:num commissioned_on
generation_output: power_plant_id output_hour mwh:num
outage: substation_id started_at restored_at customers_affected:int cause=storm|equipment failure|vegetation|planned
*substation: substation_name voltage_kv:num region
transformer: substation_id rating_kva:num installed_on
feeder_line: substation_id feeder_code length_km:num
solar_installation: site_id panel_capacity_kw:num installed_on feed_in_tariff:num
ev_charger: site_id charger_type=level 2|dc fast power_kw:num
charging_session: ev_charger_id started_at energy_kwh:num
demand_response_event: event_date start_hour:int end_hour:int reduction_mw:num
carbon_emission: power_plant_id report_month tonnes_co2:num
field_crew_dispatch: outage_id crew_name dispatched_at arrived_at
spot_price: trading_hour price_per_mwh:num
"""),
    ("telecom", "snake", True,
     "Telecom operator: mobile subscribers, service plans and subscriptions, SIM cards and "
     "handsets, call, SMS and data usage records, cell towers, billing, roaming, number "
     "porting, top-ups and churn.", """
*subscriber: full_name msisdn date_of_birth customer_type=prepaid|postpaid|business
*service_plan: plan_name=Unlimited 5G|Basic 10GB|Family Share|Business Pro monthly_fee:num data_allowance_gb:num
subscription: subscriber_id service_plan_id activated_on deactivated_on status=active|suspended|ported out
*sim_card: iccid subscriber_id status=active|blocked
*handset: imei brand model subscriber_id
call_detail_record: subscription_id called_number call_start_at duration_seconds:int is_roaming
sms_record: subscription_id sent_at destination_country
data_usage_session: subscription_id session_start_at megabytes_used:num cell_tower_id
*cell_tower: tower_code latitude:num longitude:num technology=4G|5G|3G region
network_incident: cell_tower_id started_at ended_at severity
*billing_statement: subscriber_id statement_month amount_due:num paid:bool
roaming_partner: operator_name country
roaming_charge: subscription_id roaming_partner_id charge_amount:num usage_date
port_request: subscriber_id donor_operator recipient_operator requested_on completed_on
churn_prediction: subscriber_id scored_on churn_probability:num
device_installment: subscriber_id handset_id monthly_installment:num months_remaining:int
top_up: subscription_id topped_up_at amount channel=app|retail|voucher
customer_complaint: subscriber_id complaint_type=dropped calls|billing error|slow data logged_on resolved:bool
number_inventory: msisdn_range_start status=available|assigned|quarantined
bundle_addon: addon_name=International Pack|Extra 5GB|Roaming Day Pass price:num
subscription_addon: subscription_id bundle_addon_id added_on
"""),
    ("travel", "pascal", False,
     "Travel agency and bookings: travelers, bookings, flights and airlines, airports, hotels "
     "and reservations, car rentals, tour packages, loyalty points, cancellations, baggage, "
     "visas and reviews.", """
*traveler: first_name last_name passport_number nationality loyalty_tier=Silver|Gold|Platinum
*booking: traveler_id booked_at total_price:num currency status=confirmed|cancelled|completed booking_channel=web|app|agent
*flight: airline_id flight_number origin_airport_id:int destination_airport_id:int departure_at arrival_at
airline: airline_name=Lufthansa|Delta|Emirates|Ryanair alliance
airport: iata_code=JFK|LHR|FRA|DXB city country
flight_segment: booking_id flight_id cabin_class=economy|premium economy|business|first seat_number fare:num
*hotel: hotel_name city star_rating:int chain
hotel_reservation: booking_id hotel_id check_in_date check_out_date nightly_rate:num room_type=single|double|suite
car_rental: booking_id rental_company=Hertz|Avis|Sixt pickup_date return_date daily_rate:num
*tour_package: package_name destination duration_nights:int price:num
package_booking: booking_id tour_package_id travelers:int
loyalty_account: traveler_id points_balance:int
loyalty_transaction: loyalty_account_id points:int transaction_type=earn|redeem|expire occurred_at
travel_insurance_add_on: booking_id coverage_type=trip cancellation|medical|baggage price:num
cancellation: booking_id cancelled_at refund_amount:num reason=illness|schedule change|weather
visa_requirement: nationality destination_country visa_required:bool
baggage: flight_segment_id bag_count:int excess_fee:num
review: traveler_id hotel_id rating:int review_text posted_at
itinerary_item: booking_id item_type day_number:int description
fare_rule: airline_id fare_basis change_fee:num is_refundable
"""),
    ("retail_pos", "pascal", True,
     "Retail point of sale: stores, registers and cashiers, checkout transactions and "
     "baskets, products and shelf prices, promotions, loyalty members, refunds, gift cards, "
     "cash drawers, foot traffic and shrinkage.", """
*store: store_name city region opened_on square_meters:int
*register: store_id register_number
*cashier: full_name store_id hired_on
*pos_transaction: store_id register_id cashier_id transaction_at total_amount:num payment_type=cash|card|mobile|gift card
pos_transaction_line: pos_transaction_id product_id quantity unit_price discount:num
*product: barcode product_name department=Grocery|Apparel|Electronics|Home brand retail_price:num
shelf_price: store_id product_id price:num effective_from
promotion: promotion_name=Buy One Get One|Weekend Sale|Clearance start_date end_date discount_pct:num
promotion_product: promotion_id product_id
*loyalty_member: card_number first_name email points:int tier=Bronze|Silver|Gold
member_transaction: loyalty_member_id pos_transaction_id points_earned:int
refund: pos_transaction_id refunded_at amount reason=defective|changed mind|wrong size
cash_drawer_count: register_id counted_at expected_cash:num counted_cash:num
shift_schedule: cashier_id store_id shift_date start_time end_time
gift_card: card_code initial_value:num balance:num issued_at
store_traffic: store_id traffic_date visitors:int
planogram: store_id aisle product_id facings:int
shrinkage_record: store_id product_id quantity reason=theft|damage|expiry recorded_on
daily_store_sales: store_id sales_date net_sales:num transactions:int
price_override: pos_transaction_line_id cashier_id original_price:num override_price:num
"""),
    ("legal", "snake", False,
     "Law firm practice management: matters and clients, attorneys and billable time, legal "
     "invoices, court cases, hearings and filings, contracts and clauses, deadlines, conflict "
     "checks, trademarks and patents, settlements and legal holds.", """
*matter: matter_name client_id practice_area=litigation|mergers|employment|intellectual property opened_on closed_on status=open|closed|on hold
*client: client_name industry
*attorney: full_name bar_number practice_group hourly_rate:num is_partner
matter_assignment: matter_id attorney_id role=lead|associate|paralegal
*time_entry: matter_id attorney_id work_date hours:num narrative billable:bool
legal_invoice: matter_id invoice_date fees:num disbursements:num status=sent|paid|written off
*court_case: matter_id docket_number court=District Court|Court of Appeal|Supreme Court judge filed_on
hearing: court_case_id hearing_date hearing_type=motion|trial|status conference outcome
filing: court_case_id document_title filed_on
*contract_document: client_id counterparty contract_type=NDA|MSA|lease|employment signed_on expires_on governing_law
contract_clause: contract_document_id clause_type=indemnity|termination|confidentiality|non-compete clause_text
deadline: matter_id deadline_date description is_met
conflict_check: client_id checked_on adverse_party result=clear|conflict
trademark: client_id mark_name registration_number jurisdiction=EU|US|UK|JP filed_on
patent: client_id title patent_number granted_on
settlement: court_case_id settlement_amount:num settled_on
expert_witness: full_name specialty daily_fee:num
case_witness: court_case_id expert_witness_id
retainer: client_id amount received_on balance:num
regulatory_inquiry: client_id agency=SEC|FTC|EPA opened_on
legal_hold: matter_id custodian issued_on released_on
"""),
    ("research", "snake", True,
     "Scientific research administration: grants and funders, researchers and labs, "
     "projects and experiments, samples and freezers, instruments, publications, datasets, "
     "ethics approvals, study participants and reagents.", """
*grant: funder=NIH|NSF|ERC|Wellcome Trust grant_title amount start_date end_date principal_investigator_id:int
*researcher: full_name lab_id orcid position=postdoc|PhD student|professor|technician
*lab: lab_name department building
*project: grant_id project_title status=active|completed|suspended
*experiment: project_id researcher_id started_on hypothesis
sample: experiment_id sample_code specimen_type=blood|tissue|soil|cell culture collected_on freezer_id
freezer: freezer_name lab_id temperature_c:num
measurement: sample_id instrument_id measured_at value:num unit
instrument: instrument_name=Mass Spectrometer|Confocal Microscope|PCR Machine|Sequencer lab_id calibrated_on
instrument_booking: instrument_id researcher_id booked_from booked_until
publication: title journal published_on doi citation_count:int
publication_author: publication_id researcher_id author_position:int
dataset: project_id dataset_name size_gb:num license=CC-BY|CC0|restricted
ethics_approval: project_id committee approval_number approved_on expires_on
study_participant: project_id participant_code age:int consent_signed_on
grant_expenditure: grant_id spent_on amount category=equipment|personnel|travel|consumables
reagent: reagent_name supplier lot_number expiry_date
reagent_order: reagent_id lab_id ordered_on quantity cost
collaboration: project_id partner_institution country
conference_talk: researcher_id conference_name presented_on
patent_disclosure: project_id disclosed_on title
"""),
]

# fmt: on

_SHARED_TABLES = """
app_user: username email role=admin|analyst|viewer last_login_at is_active
audit_log: table_name action=insert|update|delete changed_by changed_at notes
etl_batch_log: batch_name started_at finished_at rows_loaded:int status=success|failed|running
system_setting: setting_key setting_value notes
"""
"""Generic tables every domain has, under the same names: noise for routing."""

_DERIVED = [
    ("{e}_audit", "{e}_id changed_by changed_at field_name old_value new_value"),
    ("stg_{e}", "{e}_id source_system=SAP|Salesforce|CSV upload|API raw_payload loaded_at"),
    ("{e}_history", "{e}_id valid_from valid_to status notes"),
    ("{e}_status", "status_code label=active|inactive|pending|closed description is_terminal"),
    ("{e}_note", "{e}_id author notes created_at"),
    ("{e}_attachment", "{e}_id file_name mime_type=application/pdf|image/png|text/csv uploaded_at"),
    ("{e}_archive", "{e}_id archived_at archived_by payload"),
    ("stg_{e}_error", "{e}_id error_message rejected_at"),
]
"""Tables derived from each domain's main entities, in the order they fill a domain to 60."""

# ---------------------------------------------------------------------------------------------
# Routing questions: (datasources, "domain.table" canonical names, difficulty, question)

# fmt: off
_CASES: list[tuple[str, str, str, str]] = [
    # hr
    ("hr", "leave_balance leave_type employee", "easy", "Which employees have unused vacation days carried over from last year?"),
    ("hr", "employee department", "easy", "How many people did we hire into the engineering department in 2023?"),
    ("hr", "offer", "medium", "What share of job offers were declined by candidates?"),
    ("hr", "certification employee", "hard", "Which staff members hold a first aid certificate that expires this year?"),
    ("hr", "exit_interview", "medium", "What are the most common reasons people give in exit interviews for quitting?"),
    ("hr", "training_course training_enrollment employee", "medium", "Who has not yet finished the mandatory harassment prevention training?"),
    ("hr", "performance_review employee department", "easy", "What is the average performance review rating in each department?"),
    # payroll
    ("payroll", "payslip_line earning_code payslip pay_run", "medium", "What was the total overtime pay in the last pay run?"),
    ("payroll", "payslip pay_run", "easy", "How much tax was withheld from workers' paychecks in March?"),
    ("payroll", "garnishment worker", "easy", "Which workers have wage garnishments for child support?"),
    ("payroll", "benefit_plan benefit_enrollment", "medium", "What is the total employer contribution to health benefit plans?"),
    ("payroll", "reimbursement", "medium", "How much mileage reimbursement was paid out last quarter?"),
    ("payroll", "pay_grade", "easy", "Which pay grade has the highest base salary?"),
    ("payroll", "direct_deposit bank_account", "medium", "How much net pay was deposited into accounts at each bank?"),
    # crm
    ("crm", "opportunity", "easy", "Which opportunities in the negotiation stage are expected to close this month?"),
    ("crm", "lead", "easy", "How many leads from trade shows were converted?"),
    ("crm", "churn_risk_score account", "medium", "Which accounts are at high risk of churning?"),
    ("crm", "forecast sales_rep", "medium", "What is each sales rep's forecast versus committed amount for the quarter?"),
    ("crm", "email_interaction contact", "medium", "Which contacts opened our emails but never clicked a link?"),
    ("crm", "account account_segment customer_segment", "hard", "List the enterprise accounts together with their annual revenue."),
    ("crm", "contract", "medium", "How many customer contracts are up for renewal next quarter?"),
    # sales
    ("sales", "invoice customer customer_group", "medium", "What were total invoiced sales per customer group last year?"),
    ("sales", "return_line return_authorization product", "medium", "Which products were returned most often as defective?"),
    ("sales", "backorder sales_order_line", "easy", "How many order lines are still waiting on backordered stock?"),
    ("sales", "salesperson sales_target sales_order", "medium", "Which salespeople beat their monthly sales target?"),
    ("sales", "sales_order_line product product_category", "medium", "What is the average discount on order lines for snacks?"),
    ("sales", "credit_note", "easy", "How much was credited back to customers for pricing errors?"),
    ("sales", "customer invoice payment", "hard", "Which customers owe more than their credit limit on unpaid invoices?"),
    # inventory
    ("inventory", "item stock_level warehouse", "easy", "Which items are below their reorder point in the Rotterdam warehouse?"),
    ("inventory", "cycle_count cycle_count_line", "medium", "What was the total variance found in last month's cycle counts?"),
    ("inventory", "lot", "medium", "Which lots expire within the next 30 days?"),
    ("inventory", "stock_adjustment", "hard", "How many units were written off as shrinkage?"),
    ("inventory", "goods_receipt_line goods_receipt purchase_order supplier", "medium", "Which suppliers had the most units rejected when goods were received?"),
    ("inventory", "stock_valuation item item_class", "medium", "What is the total stock valuation of raw materials on hand?"),
    # logistics
    ("logistics", "delivery_attempt parcel", "easy", "Which parcels had a failed delivery attempt because no one was home?"),
    ("logistics", "shipment carrier", "medium", "What is the average transit time per carrier for delivered shipments?"),
    ("logistics", "fuel_purchase vehicle", "medium", "How much did we spend on diesel for our trucks last month?"),
    ("logistics", "driver_hours_log driver", "medium", "Which drivers exceeded nine driving hours in a single day?"),
    ("logistics", "customs_declaration", "easy", "What was the total customs duty paid on imported shipments?"),
    ("logistics", "tracking_event hub", "medium", "Which hubs had the most parcels arrive last week?"),
    # manufacturing
    ("manufacturing", "scrap_record production_order work_center", "medium", "What was the scrap rate on paint shop production orders?"),
    ("manufacturing", "machine_downtime machine", "easy", "Which machines had the most downtime from breakdowns?"),
    ("manufacturing", "yield_measurement production_order work_center", "hard", "What is the overall equipment effectiveness of each work center this week?"),
    ("manufacturing", "defect quality_inspection", "medium", "How many critical defects did quality inspectors find?"),
    ("manufacturing", "bill_of_material product", "hard", "Which components go into each assembly and in what quantities?"),
    ("manufacturing", "tooling", "hard", "Which molds are close to their maximum number of cycles?"),
    # ledger
    ("ledger", "trial_balance gl_account fiscal_period", "medium", "What is the closing trial balance of the revenue accounts for the period?"),
    ("ledger", "ap_invoice vendor", "hard", "Which vendor bills are overdue and still unpaid?"),
    ("ledger", "depreciation_entry fixed_asset fiscal_period", "easy", "How much depreciation did we book on fixed assets this fiscal year?"),
    ("ledger", "budget journal_line cost_center", "medium", "What was actual spend versus budget for the R&D cost center?"),
    ("ledger", "ar_invoice", "hard", "Which receivables were written off as bad debt?"),
    ("ledger", "exchange_rate", "easy", "What was the euro to dollar exchange rate at month end?"),
    ("ledger", "journal_entry", "easy", "Which journal entries were reversed?"),
    # marketing
    ("marketing", "keyword ad_group campaign", "medium", "Which search campaign had the lowest cost per click?"),
    ("marketing", "email_event email_send", "medium", "What was the open rate of the spring newsletter email?"),
    ("marketing", "promo_code", "easy", "How many times was each promo code redeemed?"),
    ("marketing", "influencer", "medium", "Which TikTok influencers have over a million followers?"),
    ("marketing", "ab_test ab_test_result", "medium", "Which variant won each A/B test and by how many conversions?"),
    ("marketing", "brand_survey", "medium", "How has our net promoter score moved in the brand surveys?"),
    ("marketing", "media_budget_allocation", "medium", "How much of the social media budget was spent this quarter?"),
    # support
    ("support", "sla_breach ticket sla_policy", "easy", "How many urgent tickets breached their resolution SLA?"),
    ("support", "csat_survey ticket agent", "medium", "What is the average satisfaction survey rating for each agent?"),
    ("support", "knowledge_article article_feedback", "medium", "Which help center articles were voted most helpful?"),
    ("support", "call_record", "hard", "How long are callers kept on hold on average?"),
    ("support", "incident_ticket_link outage_incident", "medium", "How many tickets were linked to the payments outage?"),
    ("support", "escalation team ticket", "medium", "Which tickets were escalated to the billing team?"),
    # healthcare
    ("healthcare", "diagnosis lab_result lab_order encounter patient", "medium", "Which patients diagnosed with type 2 diabetes have an HbA1c result above 9?"),
    ("healthcare", "readmission", "medium", "What is the 30-day hospital readmission rate?"),
    ("healthcare", "allergy", "easy", "How many patients are allergic to penicillin?"),
    ("healthcare", "appointment provider", "hard", "Which doctors had the most no-show appointments?"),
    ("healthcare", "encounter provider", "medium", "What is the average length of stay for inpatient admissions under cardiology?"),
    ("healthcare", "immunization", "hard", "How many flu vaccines were given last winter?"),
    ("healthcare", "medical_claim", "hard", "What share of medical claims did payers deny?"),
    # education
    ("education", "transcript student", "medium", "Which students had a term GPA above 3.8?"),
    ("education", "exam exam_result course_section course", "medium", "What was the pass rate on the final exam of introductory statistics?"),
    ("education", "submission assignment course_section course", "hard", "How many homework assignments were handed in late in each course?"),
    ("education", "tuition_invoice term student", "medium", "Which students still owe tuition for the fall term?"),
    ("education", "scholarship scholarship_award", "easy", "How many merit scholarships were awarded this year?"),
    ("education", "instructor course_section", "hard", "Which professors teach the most class sections?"),
    ("education", "graduation", "medium", "How many students graduated summa cum laude?"),
    # real_estate
    ("real_estate", "sale_transaction listing property", "medium", "What is the median sale price of condos in each neighborhood?"),
    ("real_estate", "listing sale_transaction", "medium", "How many days do listings stay on the market before they sell?"),
    ("real_estate", "rent_payment lease tenant", "medium", "Which tenants paid their rent late most often?"),
    ("real_estate", "price_change listing property", "hard", "Which homes had their asking price cut while on the market?"),
    ("real_estate", "maintenance_request", "medium", "How many unresolved maintenance requests about mold do we have?"),
    ("real_estate", "offer buyer", "medium", "Which buyers had their offers countered?"),
    ("real_estate", "appraisal listing property", "medium", "How does the appraised value compare with the list price for each property?"),
    # insurance
    ("insurance", "claim claim_payment", "easy", "What was the average claim payout for flood damage?"),
    ("insurance", "policy premium_installment", "medium", "Which policies lapsed after missed premium installments?"),
    ("insurance", "loss_ratio_snapshot", "medium", "What is the loss ratio for the auto line of business?"),
    ("insurance", "adjuster claim_assignment claim", "medium", "Which adjusters have the most open claims assigned to them?"),
    ("insurance", "fraud_flag", "easy", "How many claims were flagged as possible fraud?"),
    ("insurance", "insured_property policy", "hard", "Which insured homes are located in flood zone A?"),
    ("insurance", "broker policy_broker policy", "medium", "How much commission did each broker earn on the policies they sold?"),
    # energy
    ("energy", "outage", "medium", "How many customers lost power in storm outages last year?"),
    ("energy", "generation_output power_plant", "medium", "What share of generation came from wind and solar plants?"),
    ("energy", "meter_reading meter", "medium", "Which meters had estimated readings three months in a row?"),
    ("energy", "charging_session ev_charger", "hard", "How much electricity was drawn at electric vehicle charging points?"),
    ("energy", "carbon_emission power_plant", "medium", "How many tonnes of CO2 did the coal plants emit?"),
    ("energy", "spot_price", "hard", "What was the average wholesale electricity price during peak hours?"),
    ("energy", "site tariff customer_account", "hard", "Which households are on the time of use tariff?"),
    # telecom
    ("telecom", "churn_prediction subscriber", "medium", "Which subscribers are most likely to churn next month?"),
    ("telecom", "data_usage_session subscription subscriber cell_tower", "medium", "How much mobile data did prepaid users consume on 5G towers?"),
    ("telecom", "port_request", "hard", "How many customers moved their phone number to another operator?"),
    ("telecom", "roaming_charge roaming_partner", "medium", "What is the roaming revenue by partner network country?"),
    ("telecom", "network_incident cell_tower", "medium", "Which cell towers had the most network incidents?"),
    ("telecom", "customer_complaint", "medium", "How many complaints about dropped calls did we receive?"),
    ("telecom", "top_up", "medium", "What is the average prepaid top-up amount made through the app?"),
    # travel
    ("travel", "review hotel", "medium", "Which hotels got the best guest review ratings?"),
    ("travel", "cancellation", "medium", "How many trips were cancelled because of weather and how much was refunded?"),
    ("travel", "flight_segment flight airline", "medium", "What is the average fare for business class seats on Emirates flights?"),
    ("travel", "loyalty_transaction loyalty_account traveler", "medium", "Which Platinum loyalty travelers redeemed the most points?"),
    ("travel", "travel_insurance_add_on", "hard", "How many travelers added trip cancellation cover to their booking?"),
    ("travel", "baggage flight_segment booking traveler", "medium", "Which passengers paid excess baggage fees?"),
    ("travel", "visa_requirement", "medium", "Which destination countries require a visa for Indian nationals?"),
    # retail_pos
    ("retail_pos", "daily_store_sales store", "hard", "What were net till sales per store yesterday?"),
    ("retail_pos", "cash_drawer_count register cashier", "medium", "Which cashiers had the largest cash drawer shortfalls?"),
    ("retail_pos", "shrinkage_record store", "hard", "How much merchandise was lost to theft in each store?"),
    ("retail_pos", "gift_card", "easy", "What is the outstanding balance on gift cards?"),
    ("retail_pos", "pos_transaction_line promotion_product promotion", "medium", "Which products sold the most during the weekend sale promotion?"),
    ("retail_pos", "store_traffic", "hard", "How many shoppers walked into each store per day?"),
    ("retail_pos", "price_override", "medium", "How often do cashiers override shelf prices at checkout?"),
    # legal
    ("legal", "time_entry attorney matter", "medium", "How many billable hours did each partner record on litigation matters?"),
    ("legal", "contract_document", "medium", "Which NDAs expire next quarter?"),
    ("legal", "settlement court_case", "medium", "What is the total settlement amount across court cases this year?"),
    ("legal", "deadline matter", "medium", "Which matters have missed a deadline?"),
    ("legal", "conflict_check client", "medium", "Which prospective clients failed the conflict check?"),
    ("legal", "trademark", "easy", "Which trademarks did we file for clients in the EU?"),
    ("legal", "legal_hold", "hard", "Which custodians are under a litigation hold that has not been released?"),
    # research
    ("research", "grant_expenditure grant", "medium", "How much NIH grant money has been spent on equipment?"),
    ("research", "publication publication_author researcher", "medium", "Which researchers have the most cited publications?"),
    ("research", "ethics_approval project", "medium", "Which ethics approvals expire before their project ends?"),
    ("research", "sample freezer", "medium", "How many blood samples are stored in each freezer?"),
    ("research", "instrument_booking instrument researcher", "medium", "Who booked the mass spectrometer most often last month?"),
    ("research", "reagent", "medium", "Which reagents are past their expiry date?"),
    ("research", "study_participant", "medium", "How many study participants have signed consent forms?"),
    # across two domains
    ("hr payroll", "hr.employee hr.grade payroll.worker payroll.payslip", "hard", "Compare each employee's salary grade in HR with what payroll actually paid them."),
    ("crm sales", "crm.account crm.opportunity sales.customer sales.invoice", "hard", "Which won CRM opportunities turned into invoiced sales orders?"),
    ("marketing crm", "marketing.campaign crm.campaign_member crm.opportunity", "hard", "Do our marketing campaigns produce opportunities in the CRM pipeline?"),
    ("energy insurance", "energy.outage insurance.claim", "hard", "Did storm power outages lead to more home insurance claims?"),
    ("manufacturing inventory", "manufacturing.production_order inventory.stock_level inventory.item", "hard", "Which products we manufacture are in stock in the warehouses?"),
    ("ledger payroll", "ledger.journal_entry ledger.journal_line payroll.pay_run", "hard", "Do payroll journal entries in the general ledger match the pay runs?"),
]

# fmt: on

# ---------------------------------------------------------------------------------------------
# Types and values

_TYPES = {
    "int": "INTEGER",
    "num": "NUMERIC(12,2)",
    "text": "TEXT",
    "date": "DATE",
    "ts": "TIMESTAMP",
    "bool": "BOOLEAN",
}
_MONEY = (
    "amount",
    "price",
    "cost",
    "salary",
    "pay",
    "budget",
    "fee",
    "premium",
    "rent",
    "revenue",
    "value",
    "balance",
    "limit",
    "deductible",
    "total",
    "spend",
    "payout",
    "dues",
    "commission",
    "rate",
    "wages",
    "tax",
    "fare",
    "deposit",
    "contribution",
)
_COUNTS = ("count", "qty", "quantity", "year", "headcount", "capacity", "credits", "seats")

_FIRST = ("Ana", "Ben", "Chen", "Dana", "Elif", "Farid", "Grace", "Hugo")
_LAST = ("Silva", "Okafor", "Wei", "Kowalski", "Yilmaz", "Haddad", "Kim", "Martin")
_PEOPLE = (
    "full_name",
    "contact_name",
    "employee_name",
    "account_holder",
    "changed_by",
    "approved_by",
    "processed_by",
    "posted_by",
    "received_by",
    "picker_name",
    "counter_name",
    "inspector",
    "technician",
    "judge",
    "custodian",
    "author",
    "read_by",
    "signed_by",
    "archived_by",
    "beneficiary_name",
    "crew_name",
    "reviewer",
    "username",
)
_POOLS = {
    "city": ("Rotterdam", "Austin", "Lyon", "Osaka"),
    "country": ("Netherlands", "United States", "France", "Japan"),
    "currency": ("USD", "EUR", "GBP", "JPY"),
    "status": ("active", "inactive", "pending", "closed"),
    "notes": ("checked", "follow up", "see attachment", "n/a"),
    "region": ("North", "South", "East", "West"),
}


def _sql_type(column: str) -> str:
    """The SQL type a column's name suggests (``hire_date`` DATE, ``opened_at`` TIMESTAMP,
    ``is_paid`` BOOLEAN, ``headcount`` INTEGER, ``unit_price`` NUMERIC, else TEXT)."""
    words = column.split("_")
    last = words[-1]
    if last == "id":
        return "INTEGER"
    if column in ("date_of_birth", "week_start", "valid_to") or last in (
        "date",
        "on",
        "until",
        "from",
    ):
        return "DATE"
    if column.endswith(("period_start", "period_end")):
        return "DATE"
    if last in ("at", "hour", "time") or column == "interval_start":
        return "TIMESTAMP"
    if words[0] in ("is", "has", "was", "would"):
        return "BOOLEAN"
    if last in ("name", "code", "basis", "center", "start") or column in (
        "old_value",
        "new_value",
        "setting_value",
    ):
        return "TEXT"
    if last in ("days", "hours"):
        return "NUMERIC(12,2)"
    if any(word in _COUNTS for word in words) or last in ("minutes", "seconds"):
        return "INTEGER"
    if any(word in _MONEY for word in words) or last in ("pct", "score", "kg", "km", "kwh", "mw"):
        return "NUMERIC(12,2)"
    return "TEXT"


def _pascal(name: str) -> str:
    return "".join(word[:1].upper() + word[1:] for word in name.split("_"))


def _plural(name: str) -> str:
    head, _, last = name.rpartition("_")
    if last.endswith("y") and last[-2:-1] not in "aeiou":
        last = last[:-1] + "ies"
    elif last.endswith(("s", "x", "ch", "sh")):
        last += "es"
    else:
        last += "s"
    return f"{head}_{last}" if head else last


@attrs.frozen
class _Column:
    name: str  # canonical snake_case
    type: str
    values: tuple[str, ...] = ()


@attrs.frozen
class _Table:
    name: str  # canonical snake_case, singular
    columns: tuple[_Column, ...]
    kind: str  # "hand", "shared" or "derived"


def _parse_line(line: str, kind: str) -> tuple[_Table, bool]:
    head, _, rest = line.partition(":")
    entity = head.startswith("*")
    table = head.lstrip("*").strip()
    columns = [_Column(f"{table}_id", "INTEGER")]
    for token in rest.split():
        values: tuple[str, ...] = ()
        if "=" in token:
            token, _, raw = token.partition("=")
            values = tuple(raw.split("|"))
        if ":" in token:
            token, _, type_key = token.partition(":")
            sql_type = _TYPES[type_key]
        else:
            sql_type = _sql_type(token)
        columns.append(_Column(token, sql_type, values))
    return _Table(table, tuple(columns), kind), entity


def _parse_block(block: str, kind: str) -> list[tuple[_Table, bool]]:
    parsed = []
    for raw in block.strip().splitlines():
        # values may contain spaces ("job board"): protect them before splitting on blanks
        line = _protect_spaces(raw.strip())
        table, entity = _parse_line(line, kind)
        table = attrs.evolve(
            table,
            columns=tuple(
                attrs.evolve(c, values=tuple(v.replace("\x00", " ") for v in c.values))
                for c in table.columns
            ),
        )
        parsed.append((table, entity))
    return parsed


def _protect_spaces(line: str) -> str:
    """Values may hold spaces (``source=job board|agency``): within a value run, a word that
    does not look like a column name is joined to the value before it (with a NUL)."""
    head, _, rest = line.partition(":")
    out: list[str] = []
    in_values = False
    for word in rest.split():
        if in_values and "=" not in word and not _looks_like_column(word):
            out[-1] += "\x00" + word
            continue
        out.append(word)
        in_values = "=" in word
    return head + ":" + " ".join(out)


def _looks_like_column(word: str) -> bool:
    """Column names are lower snake_case identifiers, optionally with ``:type``."""
    name = word.split(":", 1)[0]
    return (
        bool(name)
        and name.replace("_", "").isalnum()
        and name.islower()
        and ("_" in name or ":" in word or name in _PLAIN_COLUMNS)
    )


_PLAIN_COLUMNS = frozenset(
    """
    email hire_date headcount phone city country source stage rating feedback comments
    year score provider reason amount hours code description quantity region quota subject
    priority status industry sku carrier street currency rack shelf aisle cost mode route
    lender ward goal condition unit value title journal doi body category tag comment dosage
    frequency strength form payer capacity building rank faculty honors model make vin address
    neighborhood bedrooms bathrooms issue inspector findings relationship reinsurer caseload
    handle platform winner variant url caption likes shares keyword channel budget objective
    targeting headline impressions clicks spend recipients points tier brand barcode department
    price balance facings transactions visitors msisdn iccid imei brand severity technology
    latitude longitude nationality destination chain alliance role narrative billable court
    judge outcome counterparty agency custodian funder orcid position hypothesis committee age
    supplier license cause fees disbursements result modality specialty allergen reaction
    vaccine bed grade lot paid present approved macro actions skill team queue body
    author notes label payload action username
    """.split()
)


def _style(name: str, style: str) -> str:
    return _pascal(name) if style == "pascal" else name


# ---------------------------------------------------------------------------------------------
# The schema


@attrs.frozen
class WideCase:
    """One routing question of the test bed: where it goes and which tables it reads."""

    id: str
    question: str
    datasources: tuple[str, ...]
    tables: tuple[str, ...]  # "domain.Table", as named in the generated schema
    difficulty: str


class WideSchema:
    """The generated schema. ``domains`` maps domain -> table -> ``[(column, sql_type)]`` with
    the names as they appear in the databases; ``descriptions`` holds a sentence per domain."""

    def __init__(self, seed: int = 0) -> None:
        self.seed = seed
        self.domains: dict[str, dict[str, list[tuple[str, str]]]] = {}
        self.descriptions: dict[str, str] = {}
        self._tables: dict[str, dict[str, _Table]] = {}  # domain -> actual name -> table
        self._names: dict[str, dict[str, str]] = {}  # domain -> canonical -> actual name
        self._styles: dict[str, str] = {}
        shared = _parse_block(_SHARED_TABLES, "shared")
        for domain, style, plural, description, block in _DOMAINS:
            self._styles[domain] = style
            self.descriptions[domain] = description
            hand = _parse_block(block, "hand")
            tables = [_with_created_at(table) for table, _ in hand]
            entities = [table.name for table, is_entity in hand if is_entity]
            tables += [table for table, _ in shared]
            taken = {table.name for table in tables}
            for pattern, spec in _DERIVED:
                for entity in entities:
                    if len(tables) >= TABLES_PER_DOMAIN:
                        break
                    name = pattern.format(e=entity)
                    if name in taken:
                        continue
                    line = f"{name}: {spec.format(e=entity)}"
                    table, _ = _parse_block(line, "derived")[0]
                    tables.append(table)
                    taken.add(name)
            if len(tables) != TABLES_PER_DOMAIN:
                raise AssertionError(f"domain {domain!r} has {len(tables)} tables, not 60")
            names: dict[str, str] = {}
            actual: dict[str, _Table] = {}
            for table in tables:
                canonical = table.name
                shown = _plural(canonical) if plural and table.kind == "hand" else canonical
                names[canonical] = _style(shown, style)
                actual[names[canonical]] = table
            self._names[domain] = names
            self._tables[domain] = actual
            self.domains[domain] = {
                name: [(_style(c.name, style), c.type) for c in table.columns]
                for name, table in actual.items()
            }

    # -- names

    @property
    def table_count(self) -> int:
        """Tables over all domains (1,200)."""
        return sum(len(tables) for tables in self.domains.values())

    def table_name(self, domain: str, canonical: str) -> str:
        """The table's name in the database for its canonical ``snake_case`` singular name."""
        try:
            return self._names[domain][canonical]
        except KeyError:
            raise KeyError(f"domain {domain!r} has no table {canonical!r}") from None

    def foreign_keys(self, domain: str, table: str) -> list[tuple[str, str, str]]:
        """``(column, referenced_table, referenced_column)`` for each ``<entity>_id`` column
        whose entity is a table of the same domain."""
        spec = self._tables[domain][table]
        style = self._styles[domain]
        result = []
        for column in spec.columns[1:]:
            if column.name.endswith("_id"):
                target = column.name[:-3]
                if target in self._names[domain] and target != spec.name:
                    ref = self._names[domain][target]
                    result.append((_style(column.name, style), ref, _style(column.name, style)))
        return result

    # -- rows

    def rows(self, domain: str, table: str) -> list[tuple[object, ...]]:
        """The table's deterministic rows (keys 1..4; other ``_id`` columns point at 1..4)."""
        spec = self._tables[domain][table]
        rng = random.Random(f"{self.seed}:{domain}:{spec.name}")
        offsets = [rng.randrange(max(1, len(column.values))) for column in spec.columns]
        return [
            tuple(
                _value(column, i, rng, j == 0, offsets[j]) for j, column in enumerate(spec.columns)
            )
            for i in range(1, ROWS_PER_TABLE + 1)
        ]

    # -- output

    def ddl(self, dialect: str = "sqlite", *, rows: bool = True) -> dict[str, list[str]]:
        """Per domain, the statements that create its tables (identifiers double-quoted) and,
        with ``rows``, insert their rows; ``dialect`` is ``sqlite`` or ``postgresql``. For
        PostgreSQL foreign keys are added by ``ALTER TABLE`` after the rows are in."""
        if dialect not in ("sqlite", "postgresql"):
            raise ValueError(f"ddl: dialect must be 'sqlite' or 'postgresql' (got {dialect!r})")
        result: dict[str, list[str]] = {}
        for domain, tables in self.domains.items():
            statements: list[str] = []
            alters: list[str] = []
            for table, columns in tables.items():
                parts = [
                    f"{_q(name)} {sql_type}{' PRIMARY KEY' if i == 0 else ''}"
                    for i, (name, sql_type) in enumerate(columns)
                ]
                for column, ref_table, ref_column in self.foreign_keys(domain, table):
                    clause = (
                        f"FOREIGN KEY ({_q(column)}) REFERENCES {_q(ref_table)} ({_q(ref_column)})"
                    )
                    if dialect == "sqlite":
                        parts.append(clause)
                    else:
                        alters.append(f"ALTER TABLE {_q(table)} ADD {clause}")
                statements.append(f"CREATE TABLE {_q(table)} ({', '.join(parts)})")
                if rows:
                    values = ", ".join(
                        "(" + ", ".join(_literal(v, dialect) for v in row) + ")"
                        for row in self.rows(domain, table)
                    )
                    names = ", ".join(_q(name) for name, _ in columns)
                    statements.append(f"INSERT INTO {_q(table)} ({names}) VALUES {values}")
            result[domain] = statements + alters
        return result

    def write_sqlite(self, path_dir: str | Path) -> dict[str, Path]:
        """Write one SQLite file per domain (``<dir>/<domain>.sqlite``, replaced if present)."""
        directory = Path(path_dir)
        directory.mkdir(parents=True, exist_ok=True)
        paths: dict[str, Path] = {}
        for domain, statements in self.ddl("sqlite", rows=False).items():
            path = directory / f"{domain}.sqlite"
            path.unlink(missing_ok=True)
            connection = sqlite3.connect(path)
            try:
                connection.execute("PRAGMA journal_mode=OFF")
                connection.execute("PRAGMA synchronous=OFF")
                connection.execute("BEGIN")
                for statement in statements:
                    connection.execute(statement)
                for table, columns in self.domains[domain].items():
                    marks = ", ".join("?" for _ in columns)
                    connection.executemany(
                        f"INSERT INTO {_q(table)} VALUES ({marks})",
                        [tuple(_sqlite(v) for v in row) for row in self.rows(domain, table)],
                    )
                connection.commit()
            finally:
                connection.close()
            paths[domain] = path
        return paths

    # -- questions

    def routing_cases(self) -> list[WideCase]:
        """The hand-written routing questions, with table names as in this schema."""
        cases = []
        counters: dict[str, int] = {}
        for sources, tables, difficulty, question in _CASES:
            datasources = tuple(sources.split())
            key = "_".join(datasources)
            counters[key] = counters.get(key, 0) + 1
            resolved = []
            for table in tables.split():
                domain, _, canonical = table.rpartition(".")
                domain = domain or datasources[0]
                resolved.append(f"{domain}.{self.table_name(domain, canonical)}")
            cases.append(
                WideCase(
                    id=f"{key}_{counters[key]:02d}",
                    question=question,
                    datasources=datasources,
                    tables=tuple(resolved),
                    difficulty=difficulty,
                )
            )
        return cases


def generate(seed: int = 0) -> WideSchema:
    """The wide schema: 20 domains x 60 tables. ``seed`` changes only the row values."""
    return WideSchema(seed)


def _with_created_at(table: _Table) -> _Table:
    if any(column.name == "created_at" for column in table.columns):
        return table
    return attrs.evolve(table, columns=(*table.columns, _Column("created_at", "TIMESTAMP")))


def _value(column: _Column, i: int, rng: random.Random, key: bool, offset: int) -> object:
    """Row ``i``'s value: the key, a listed value (each listed value appears when there are at
    most four), or one made up from the column's type and name."""
    if key:
        return i
    if column.values:
        return column.values[(i - 1 + offset) % len(column.values)]
    kind = column.type
    if kind == "INTEGER":
        return (
            rng.randint(1, ROWS_PER_TABLE) if column.name.endswith("_id") else rng.randint(1, 500)
        )
    if kind.startswith("NUMERIC"):
        return round(rng.uniform(1, 5000), 2)
    if kind == "DATE":
        return date(2023, 1, 1) + timedelta(days=rng.randint(0, 700))
    if kind == "TIMESTAMP":
        return datetime(2023, 1, 1, 8) + timedelta(minutes=rng.randint(0, 700 * 24 * 60))
    if kind == "BOOLEAN":
        return rng.random() < 0.5
    name = column.name
    if name == "first_name":
        return _FIRST[rng.randrange(8)]
    if name == "last_name":
        return _LAST[rng.randrange(8)]
    if name in _PEOPLE:
        return f"{_FIRST[rng.randrange(8)]} {_LAST[rng.randrange(8)]}"
    if name == "email":
        return f"user{i}@example.com"
    if name == "phone":
        return f"+1-555-01{i:02d}"
    last = name.split("_")[-1]
    if last in _POOLS:
        pool = _POOLS[last]
        return pool[(i - 1) % len(pool)]
    label = " ".join(word for word in name.split("_") if word != "name") or name
    return f"{label.capitalize()} {i}"


def _q(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _sqlite(value: object) -> object:
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, datetime):
        return value.strftime("%Y-%m-%d %H:%M:%S")
    if isinstance(value, date):
        return value.isoformat()
    return value


def _literal(value: object, dialect: str) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return ("TRUE" if value else "FALSE") if dialect == "postgresql" else str(int(value))
    if isinstance(value, int | float):
        return repr(value)
    text = str(_sqlite(value))
    return "'" + text.replace("'", "''") + "'"
